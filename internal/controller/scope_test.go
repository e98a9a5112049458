package controller

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/events"
	"github.com/haproxy-haptic/haptic/internal/metrics"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/store"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

// With per-Gateway provisioning, an HTTPRoute on Gateway A renders A's fleet only:
// not B's, and not the podSelector's (which renders no Gateway). A Service change
// may be read by any fleet: all render. A ConfigMap no template reads renders none.
// Counted by haptic_fleet_renders_total.
func TestRouteOnOneGatewayRendersOnlyItsFleet(t *testing.T) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy is not installed: make test installs it")
	}
	cfg := &v1alpha1.HAProxyTemplateConfig{Spec: v1alpha1.HAProxyTemplateConfigSpec{
		HAProxyConfig: v1alpha1.MainTemplate{Template: `global
defaults
  mode http
  timeout client 5s
  timeout connect 5s
  timeout server 5s
frontend f
  bind 127.0.0.1:18081
{% for _, r := range resources.Routes.List() %}
# route {{ cfg_word(r.Metadata.Name, "metadata.name") }}
{% end %}
{% for _, s := range resources.Services.List() %}
# service {{ cfg_word(s.Metadata.Name, "metadata.name") }}
{% end %}
`},
		WatchedResources: map[string]v1alpha1.WatchedResource{
			"gateways":    {APIVersion: "gateway.networking.k8s.io/v1", Resources: "gateways", IndexBy: []string{"metadata.namespace", "metadata.name"}},
			"routes":      {APIVersion: "gateway.networking.k8s.io/v1", Resources: "httproutes", IndexBy: []string{"metadata.namespace", "metadata.name"}},
			"services":    {APIVersion: "v1", Resources: "services", IndexBy: []string{"metadata.namespace", "metadata.name"}},
			"config-maps": {APIVersion: "v1", Resources: "configmaps", IndexBy: []string{"metadata.namespace", "metadata.name"}},
		},
	}}
	cfg.Default()
	p, err := pipeline.New(cfg, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, eng := p.Builder, p.Engine
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := metrics.New()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	config := &configStatus{dyn: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), recorder: record.NewFakeRecorder(100), log: log}
	it := &iteration{d: deps{metrics: m, log: log, bus: events.NewBus(m), config: config}, cfg: cfg, engine: eng, live: store.NewLive(b),
		checker: &validate.Checker{Layout: render.LayoutOf(&cfg.Spec)}, scope: scopeOf(b)}
	it.fleets = fleetSet{perGateway: true, log: log}
	gwA, gwB := types.NamespacedName{Namespace: "infra", Name: "a"}, types.NamespacedName{Namespace: "infra", Name: "b"}
	for _, gw := range []types.NamespacedName{{}, gwA, gwB} {
		gateway := noGateway
		if gw.Name != "" {
			gateway = gw.String()
		}
		it.fleets.add(&fleet{gateway: gw, extra: map[string]any{"gateway": gateway}, dep: deploy.New(ctx, deploy.Options{Log: log})})
	}
	put := func(resource string, raw map[string]any) {
		t.Helper()
		if _, err := it.live.Put(resource, raw); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b"} {
		put("gateways", map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
			"metadata": map[string]any{"namespace": "infra", "name": name}, "spec": map[string]any{"gatewayClassName": "haptic"}})
	}
	put("services", map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"namespace": "apps", "name": "web"}})
	route := func(name, gateway string) map[string]any {
		return map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
			"metadata": map[string]any{"namespace": "apps", "name": name},
			"spec":     map[string]any{"parentRefs": []any{map[string]any{"namespace": "infra", "name": gateway}}}}
	}
	renders := func() map[string]float64 {
		return map[string]float64{
			"default": counterValue(t, m.FleetRenders.WithLabelValues("default")),
			"a":       counterValue(t, m.FleetRenders.WithLabelValues(gwA.String())),
			"b":       counterValue(t, m.FleetRenders.WithLabelValues(gwB.String())),
		}
	}
	expect := func(step string, want map[string]float64) {
		t.Helper()
		if got := renders(); got["default"] != want["default"] || got["a"] != want["a"] || got["b"] != want["b"] {
			t.Fatalf("%s: renders %v, want %v", step, got, want)
		}
	}

	it.reconcile(ctx, false)
	expect("first reconcile", map[string]float64{"default": 1, "a": 1, "b": 1})

	put("routes", route("r1", "a"))
	it.reconcile(ctx, false)
	expect("a route on a", map[string]float64{"default": 1, "a": 2, "b": 1})

	it.reconcile(ctx, false)
	expect("nothing changed", map[string]float64{"default": 1, "a": 2, "b": 1})

	put("routes", route("r1", "b")) // moves from a to b: both read it
	it.reconcile(ctx, false)
	expect("the route moves to b", map[string]float64{"default": 1, "a": 3, "b": 2})

	put("services", map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"namespace": "apps", "name": "web",
		"labels": map[string]any{"x": "y"}}})
	it.reconcile(ctx, false)
	expect("a service changes", map[string]float64{"default": 2, "a": 4, "b": 3})

	put("config-maps", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "apps", "name": "unread"}})
	it.reconcile(ctx, false)
	expect("a ConfigMap no template reads", map[string]float64{"default": 2, "a": 4, "b": 3})

	it.reconcile(ctx, true)
	expect("forced", map[string]float64{"default": 3, "a": 5, "b": 4})
	if skipped := counterValue(t, m.FleetRendersSkipped.WithLabelValues(gwB.String())); skipped != 3 {
		t.Errorf("b skipped %v reconciles, want 3", skipped)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
