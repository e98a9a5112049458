package controller

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/haproxy-haptic/haptic/internal/metrics"
)

func TestLabelLeader(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "haptic-0", Namespace: "haptic",
		Labels: map[string]string{"app": "haptic", leaderLabel: "true"}}})
	c := &Controller{d: deps{kube: kube, log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		opts: Options{Namespace: "haptic", PodName: "haptic-0"}}
	labels := func() map[string]string {
		p, err := kube.CoreV1().Pods("haptic").Get(ctx, "haptic-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Labels
	}
	c.labelLeader(ctx, false) // a restarted replica starts as a follower
	if l := labels(); l[leaderLabel] != "" || l["app"] != "haptic" {
		t.Fatalf("after start: %v", l)
	}
	c.labelLeader(ctx, true)
	if l := labels(); l[leaderLabel] != "true" || l["app"] != "haptic" {
		t.Fatalf("after leading: %v", l)
	}
	c.opts.PodName = "" // outside a pod: nothing to label, no error
	c.labelLeader(ctx, false)
	if l := labels(); l[leaderLabel] != "true" {
		t.Fatalf("a replica without a pod name changed a pod: %v", l)
	}
}

// TestLeaseReleasedOnShutdown: when the controller's context ends (SIGTERM), the
// leader gives the Lease up — after its runners stopped, when run calls release —
// so that another replica leads at once instead of after the lease duration.
func TestLeaseReleasedOnShutdown(t *testing.T) {
	kube := fake.NewSimpleClientset()
	c := &Controller{d: deps{kube: kube, log: slog.New(slog.NewTextHandler(io.Discard, nil)), metrics: metrics.New()},
		opts: Options{Namespace: "haptic", ConfigName: "cfg", LeaderElection: &LeaderElection{
			Identity: "replica-a", LeaseDuration: time.Minute, RenewDeadline: 30 * time.Second, RetryPeriod: 100 * time.Millisecond}}}
	ctx, cancel := context.WithCancel(context.Background())
	lctx, release, err := c.lead(ctx)
	if err != nil || lctx.Err() != nil {
		t.Fatalf("lead: %v %v", err, lctx.Err())
	}
	holder := func() string {
		l, err := kube.CoordinationV1().Leases("haptic").Get(context.Background(), "cfg-leader", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}
	if h := holder(); h != "replica-a" {
		t.Fatalf("holder while leading: %q", h)
	}
	cancel()
	<-lctx.Done()
	if h := holder(); h != "replica-a" {
		t.Fatalf("the Lease was given up before the runners stopped: holder %q", h)
	}
	start := time.Now()
	release()
	if h := holder(); h != "" {
		t.Fatalf("holder after release: %q, want none", h)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("release took %s", d)
	}
}

// TestLeadershipLostThenRegained: a leader that cannot renew (the API server away)
// stops its leader-only runners and leadOnce returns without an error — run then
// campaigns again in the same process — and once the API server answers again
// the next campaign leads.
func TestLeadershipLostThenRegained(t *testing.T) {
	kube := fake.NewSimpleClientset()
	var away atomic.Bool
	kube.PrependReactor("*", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if away.Load() {
			return true, nil, errors.New("connect: connection refused")
		}
		return false, nil, nil
	})
	c := &Controller{d: deps{kube: kube, log: slog.New(slog.NewTextHandler(io.Discard, nil)), metrics: metrics.New()},
		opts: Options{Namespace: "haptic", ConfigName: "cfg", LeaderElection: &LeaderElection{
			Identity: "replica-a", LeaseDuration: time.Second, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make(chan error)
	for round := range 2 {
		stopped := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- c.leadOnce(ctx, func(lctx context.Context, wg *sync.WaitGroup) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					away.Store(true) // leading: now the API server goes away
					<-lctx.Done()
					close(stopped)
				}()
			}, errs)
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("round %d: leadOnce after a lost lease: %v, want nil (campaign again)", round, err)
			}
		case <-ctx.Done():
			t.Fatalf("round %d: leadership was never lost", round)
		}
		select {
		case <-stopped:
		default:
			t.Fatalf("round %d: leadOnce returned before its runners stopped", round)
		}
		away.Store(false) // the API server is back: the next round must lead again
	}
}
