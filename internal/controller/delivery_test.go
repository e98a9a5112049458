package controller

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/metrics"
)

// waits reports whether deliveries.wait blocks for at least 50ms.
func waits(d *deliveries) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() { d.wait(ctx); close(done) }()
	select {
	case <-done:
		return ctx.Err() != nil
	case <-time.After(time.Second):
		return true
	}
}

// Status and HAProxyCfg writes wait while a change renders and until every pod of
// its fleet answered for it; each stage of the change is observed once.
func TestDeliveriesHoldWritesUntilThePodsAnswer(t *testing.T) {
	m := metrics.New()
	d := newDeliveries(m)
	f := &fleet{}
	if waits(d) {
		t.Fatal("idle deliveries hold writes")
	}
	t0 := time.Now()
	d.changeSeen(t0)
	changed := d.reconcileStarted()
	if !changed.Equal(t0) {
		t.Fatalf("the reconcile's change began %v, want %v", changed, t0)
	}
	if !waits(d) {
		t.Fatal("writes were not held while rendering")
	}
	pods := []deploy.Pod{{Name: "hp-0"}, {Name: "hp-1"}}
	d.handed(f, "h1", pods, changed)
	d.reconcileDone()
	if !waits(d) {
		t.Fatal("writes were not held before the pods answered")
	}
	now := t0.Add(40 * time.Millisecond)
	d.outcome(f, deploy.Outcome{Pod: "hp-0", Hash: "h1", Duration: 10 * time.Millisecond}, now)
	d.outcome(f, deploy.Outcome{Pod: "hp-1", Hash: "old"}, now) // an older bundle's answer
	if !waits(d) {
		t.Fatal("writes were released with hp-1 still applying")
	}
	d.outcome(f, deploy.Outcome{Pod: "hp-1", Hash: "h1", Duration: 10 * time.Millisecond}, now)
	if waits(d) {
		t.Fatal("writes still held after every pod applied")
	}
	d.beforeStatusPass(context.Background())
	d.afterStatusPass()

	body := scrape(t, m)
	for _, want := range []string{
		`haptic_change_stage_seconds_count{stage="applied"} 2`,
		`haptic_change_stage_seconds_count{stage="planned"} 2`,
		`haptic_change_stage_seconds_count{stage="status_written"} 1`,
		`haptic_change_stage_seconds_bucket{stage="applied",le="0.05"} 2`,
		`haptic_change_stage_seconds_bucket{stage="planned",le="0.025"} 0`,
		`haptic_change_stage_seconds_bucket{stage="planned",le="0.05"} 2`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("scrape lacks %q", want)
		}
	}
}

// A failed apply, a pod that left and a stopped fleet end the wait too.
func TestDeliveriesReleaseOnFailureAndChurn(t *testing.T) {
	d := newDeliveries(nil)
	a, b, c := &fleet{}, &fleet{}, &fleet{}
	d.handed(a, "h", []deploy.Pod{{Name: "a-0"}}, time.Time{})
	d.handed(b, "h", []deploy.Pod{{Name: "b-0"}}, time.Time{})
	d.handed(c, "h", []deploy.Pod{{Name: "c-0"}}, time.Time{})
	d.outcome(a, deploy.Outcome{Pod: "a-0", Hash: "h", Err: context.DeadlineExceeded}, time.Now())
	d.podsChanged(b, nil)
	if !waits(d) {
		t.Fatal("released with c's pod still applying")
	}
	d.forget(c)
	if waits(d) {
		t.Fatal("still held after failure, churn and a stopped fleet")
	}
	// A bundle its pods run already (an identical render) gets no answer: no wait.
	d.outcome(c, deploy.Outcome{Pod: "c-0", Hash: "same"}, time.Now())
	d.handed(c, "same", []deploy.Pod{{Name: "c-0"}}, time.Time{})
	if waits(d) {
		t.Fatal("a bundle the pod runs already holds writes")
	}
	// No pods: nothing to wait for.
	d.handed(a, "h2", nil, time.Time{})
	if waits(d) {
		t.Fatal("a fleet without pods holds writes")
	}
}

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// The reconciler is idle only when nothing renders and no notification waits.
func TestReconcilerIdle(t *testing.T) {
	d := newDeliveries(nil)
	if !d.reconcilerIdle() {
		t.Fatal("a new controller must be idle")
	}
	d.notify()
	if d.reconcilerIdle() {
		t.Fatal("a waiting notification is work")
	}
	d.reconcileStarted()
	if d.reconcilerIdle() {
		t.Fatal("a running reconcile is work")
	}
	d.reconcileDone()
	if !d.reconcilerIdle() {
		t.Fatal("after the reconcile that took the notification, the reconciler is idle")
	}
}
