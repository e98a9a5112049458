package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/haproxy-haptic/haptic/internal/events"
)

// The bus takes the metrics as its hooks without either package importing the other.
var _ events.Hooks = (*Metrics)(nil)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func requireLines(t *testing.T, body string, lines ...string) {
	t.Helper()
	have := map[string]bool{}
	for l := range strings.SplitSeq(body, "\n") {
		have[l] = true
	}
	for _, l := range lines {
		if !have[l] {
			t.Errorf("scrape lacks line %q", l)
		}
	}
}

func TestEveryMetricIsExposed(t *testing.T) {
	m := New()
	// Vectors without preset label values only appear once a series exists.
	m.HAProxyReloads.WithLabelValues("haproxy-0", "config")
	m.DebounceFired.WithLabelValues("ingresses")
	m.ResourceEvents.WithLabelValues("ingresses", KindAdd)
	m.WatchedObjects.WithLabelValues("ingresses")
	m.EventsPublished.WithLabelValues("change")
	m.EventsDroppedBySubscriber.WithLabelValues("reconciler")

	body := scrape(t, m)
	for _, name := range []string{
		"haptic_reconciliation_duration_seconds histogram",
		"haptic_reconciliation_total counter",
		"haptic_deployment_duration_seconds histogram",
		"haptic_haproxy_reloads_total counter",
		"haptic_deploy_apply_total counter",
		"haptic_fast_path_failures_total counter",
		"haptic_deploy_planned_ahead_total counter",
		"haptic_deployment_runtime_divergence_total counter",
		"haptic_runtime_map_divergence_total counter",
		"haptic_validation_errors_total counter",
		"haptic_render_duration_seconds histogram",
		"haptic_renders_total counter",
		"haptic_debounce_fired_total counter",
		"haptic_resource_events_total counter",
		"haptic_watched_objects gauge",
		"haptic_haproxy_pods gauge",
		"haptic_events_published_total counter",
		"haptic_events_dropped_total counter",
		"haptic_events_dropped_critical_total counter",
		"haptic_events_dropped_by_subscriber_total counter",
		"haptic_event_subscribers gauge",
		"go_goroutines gauge",
		"process_start_time_seconds gauge",
	} {
		if !strings.Contains(body, "# TYPE "+name+"\n") {
			t.Errorf("scrape lacks # TYPE %s", name)
		}
	}
	// Preset label values start at zero.
	requireLines(t, body,
		`haptic_reconciliation_total{result="success"} 0`,
		`haptic_reconciliation_total{result="render_error"} 0`,
		`haptic_reconciliation_total{result="validation_error"} 0`,
		`haptic_reconciliation_total{result="deploy_error"} 0`,
		`haptic_deploy_apply_total{mode="runtime",result="success"} 0`,
		`haptic_deploy_apply_total{mode="reload",result="error"} 0`,
		`haptic_haproxy_reloads_total{pod="haproxy-0",reason="config"} 0`,
		`haptic_resource_events_total{kind="add",resource="ingresses"} 0`,
	)
}

func TestCountersMove(t *testing.T) {
	m := New()
	m.ObserveReconciliation(250*time.Millisecond, ResultSuccess)
	m.ObserveReconciliation(2*time.Second, ResultRenderError)
	m.ObserveRender(10 * time.Millisecond)
	m.ObserveDeployment(400*time.Millisecond, ModeRuntime, ApplySuccess)
	m.ObserveDeployment(1500*time.Millisecond, ModeReload, ApplySuccess)
	m.HAProxyReloads.WithLabelValues("haproxy-0", "config").Inc()
	m.HAProxyReloads.WithLabelValues("haproxy-1", "drift").Add(2)
	m.FastPathFailures.Inc()
	m.PlannedAhead.Inc()
	m.ValidationErrors.Inc()
	m.DebounceFired.WithLabelValues("endpointslices").Add(3)
	m.ResourceEvents.WithLabelValues("ingresses", KindUpdate).Inc()
	m.WatchedObjects.WithLabelValues("ingresses").Set(42)
	m.HAProxyPods.Set(2)
	m.ObjectsLeftOut.WithLabelValues("default", "ingresses").Set(1)
	m.WatchEventsDropped.WithLabelValues("httproutes", "unchanged").Add(5)

	// Through the bus: a subscriber with a one-event buffer drops the second and third.
	bus := events.NewBus(m)
	sub := bus.Subscribe("reconciler", 1)
	bus.Publish(ev{"change", false})
	bus.Publish(ev{"change", false})
	bus.Publish(ev{"sync", true})

	body := scrape(t, m)
	requireLines(t, body,
		`haptic_reconciliation_total{result="success"} 1`,
		`haptic_reconciliation_total{result="render_error"} 1`,
		`haptic_reconciliation_duration_seconds_count 2`,
		`haptic_reconciliation_duration_seconds_sum 2.25`,
		`haptic_reconciliation_duration_seconds_bucket{le="0.5"} 1`,
		`haptic_reconciliation_duration_seconds_bucket{le="+Inf"} 2`,
		`haptic_renders_total 1`,
		`haptic_render_duration_seconds_count 1`,
		`haptic_deployment_duration_seconds_count 2`,
		`haptic_deploy_apply_total{mode="runtime",result="success"} 1`,
		`haptic_deploy_apply_total{mode="reload",result="success"} 1`,
		`haptic_haproxy_reloads_total{pod="haproxy-0",reason="config"} 1`,
		`haptic_haproxy_reloads_total{pod="haproxy-1",reason="drift"} 2`,
		`haptic_fast_path_failures_total 1`,
		`haptic_deploy_planned_ahead_total 1`,
		`haptic_validation_errors_total 1`,
		`haptic_debounce_fired_total{resource="endpointslices"} 3`,
		`haptic_resource_events_total{kind="update",resource="ingresses"} 1`,
		`haptic_watched_objects{resource="ingresses"} 42`,
		`haptic_haproxy_pods 2`,
		`haptic_objects_left_out{fleet="default",resource="ingresses"} 1`,
		`haptic_watch_events_dropped_total{reason="unchanged",resource="httproutes"} 5`,
		`haptic_events_published_total{type="change"} 2`,
		`haptic_events_published_total{type="sync"} 1`,
		`haptic_events_dropped_total 2`,
		`haptic_events_dropped_critical_total 1`,
		`haptic_events_dropped_by_subscriber_total{subscriber="reconciler"} 2`,
		`haptic_event_subscribers 1`,
	)

	sub.Unsubscribe()
	m.ForgetPod("haproxy-0")
	body = scrape(t, m)
	requireLines(t, body, `haptic_event_subscribers 0`, `haptic_haproxy_reloads_total{pod="haproxy-1",reason="drift"} 2`)
	if strings.Contains(body, `pod="haproxy-0"`) {
		t.Error("ForgetPod left the pod's series")
	}
}

func TestNewIsIndependent(t *testing.T) {
	// Each New has its own registry: two instances (two tests, two controllers in one
	// process) must not collide on registration.
	a, b := New(), New()
	a.Renders.Inc()
	if strings.Contains(scrape(t, b), "haptic_renders_total 1") {
		t.Error("registries share state")
	}
}

type ev struct {
	typ      string
	critical bool
}

func (e ev) Type() string   { return e.typ }
func (e ev) Critical() bool { return e.critical }

func TestMetricNamesFollowConventions(t *testing.T) {
	m := New()
	m.HAProxyReloads.WithLabelValues("p", "r")
	m.DebounceFired.WithLabelValues("r")
	m.ResourceEvents.WithLabelValues("r", KindAdd)
	m.WatchedObjects.WithLabelValues("r")
	m.EventsPublished.WithLabelValues("t")
	m.EventsDroppedBySubscriber.WithLabelValues("s")
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(mfs); n < 20 {
		t.Fatalf("gathered %d families", n)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "haptic_") {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
	}
}
