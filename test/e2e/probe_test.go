package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// BenchmarkGatewayRouteProbe applies b.N HTTPRoutes one after another on one Gateway
// (with per-Gateway pods; a second Gateway idles beside it) in the gateway-api-bench
// shape — each its own hostname, a request and a response header add filter, and a
// second rule to a missing Service — and after each polls the Gateway every 5 ms
// from inside the cluster until 200 (404: not yet; anything else is counted). It
// reports apply → first 200 percentiles, renders per route of both fleets and the
// per-stage trace (haptic_change_stage_seconds):
//
//	go test -run '^$' -bench GatewayRouteProbe -benchtime 300x -timeout 30m ./test/e2e/
func BenchmarkGatewayRouteProbe(b *testing.B) { routeProbe(b, false) }

// BenchmarkGatewayRouteProbeBackendRefFilters is the same with the header filters on
// the backendRef instead of the rule. The gateway library keeps both levels' header
// values in gateway-backend-headers.map (keyed by backend or by rule), so either
// shape is map entries only: the runtime path, no reload.
func BenchmarkGatewayRouteProbeBackendRefFilters(b *testing.B) { routeProbe(b, true) }

func routeProbe(b *testing.B, onBackendRef bool) {
	e := setupLibraries(b, 1, "", "base", "ingress", "gateway")
	gw, err := gwclient.NewForConfig(e.c.REST)
	if err != nil {
		b.Fatal(err)
	}
	class := e.ns
	if _, err := gw.GatewayV1().GatewayClasses().Create(e.ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: gwv1.GatewayController(e.controllerName)},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = gw.GatewayV1().GatewayClasses().Delete(e.ctx, class, metav1.DeleteOptions{}) })
	addr := map[string]string{}
	for _, name := range []string{"bench", "idle"} {
		if _, err := gw.GatewayV1().Gateways(e.ns).Create(e.ctx, &gwv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class), Listeners: []gwv1.Listener{{
				Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType}}},
		}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range []string{"bench", "idle"} {
		e.eventually(name+" has an address", 180*time.Second, func() (bool, string) {
			g, err := gw.GatewayV1().Gateways(e.ns).Get(e.ctx, name, metav1.GetOptions{})
			if err != nil || len(g.Status.Addresses) != 1 {
				return false, fmt.Sprint(err)
			}
			addr[name] = g.Status.Addresses[0].Value
			return true, ""
		})
	}
	ip := addr["bench"]
	e.settle(ip)
	fleet, idle := `fleet="`+e.ns+`/bench"`, `fleet="`+e.ns+`/idle"`
	rendersBefore := e.metric("haptic_fleet_renders_total", fleet)
	idleBefore := e.metric("haptic_fleet_renders_total", idle)
	defBefore := e.metric("haptic_fleet_renders_total", `fleet="default"`)
	reloadsBefore := e.reloadCounts(ip)
	stageNames := []string{"rendered", "validated", "planned", "applied", "status_written"}
	stageBefore := map[string][2]float64{}
	for _, st := range stageNames {
		stageBefore[st] = [2]float64{e.metric("haptic_change_stage_seconds_sum", `stage="`+st+`"`),
			e.metric("haptic_change_stage_seconds_count", `stage="`+st+`"`)}
	}
	firedBefore := e.firedByResource()

	port := gwv1.PortNumber(80)
	backend := func(name string) []gwv1.HTTPBackendRef {
		return []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
			Name: gwv1.ObjectName(name), Port: &port}}}}
	}
	var samples []time.Duration
	unexpected := map[int]int{}
	b.ResetTimer()
	for i := range b.N {
		host := fmt.Sprintf("probe-%d.example.com", i)
		filters := []gwv1.HTTPRouteFilter{
			{Type: gwv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gwv1.HTTPHeaderFilter{
				Add: []gwv1.HTTPHeader{{Name: "X-Probe-Request", Value: fmt.Sprint(i)}}}},
			{Type: gwv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gwv1.HTTPHeaderFilter{
				Add: []gwv1.HTTPHeader{{Name: "X-Probe-Response", Value: fmt.Sprint(i)}}}},
		}
		first := backend("echo")
		if onBackendRef {
			first[0].Filters, filters = filters, nil
		}
		route := &gwv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", i)},
			Spec: gwv1.HTTPRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "bench"}}},
				Hostnames:       []gwv1.Hostname{gwv1.Hostname(host)},
				Rules: []gwv1.HTTPRouteRule{{
					Filters:     filters,
					BackendRefs: first,
				}, {
					Matches:     []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Value: ptr("/missing")}}},
					BackendRefs: backend("missing-service"),
				}},
			},
		}
		start := time.Now()
		if _, err := gw.GatewayV1().HTTPRoutes(e.ns).Create(e.ctx, route, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		for {
			code, _, _ := e.getGateway(ip, host, "/")
			if code == 200 {
				break
			}
			if code != 404 {
				unexpected[code]++
			}
			if time.Since(start) > 30*time.Second {
				b.Fatalf("%s: no 200 within 30s", host)
			}
			time.Sleep(5 * time.Millisecond)
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	n := float64(len(samples))
	renders := e.metric("haptic_fleet_renders_total", fleet) - rendersBefore
	idleRenders := e.metric("haptic_fleet_renders_total", idle) - idleBefore
	defRenders := e.metric("haptic_fleet_renders_total", `fleet="default"`) - defBefore
	after := e.reloadCounts(ip)
	sorted := append([]time.Duration(nil), samples...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	pct := func(s []time.Duration, p float64) time.Duration { return s[int(p*float64(len(s)-1))] }
	quarter := func(s []time.Duration) time.Duration {
		c := append([]time.Duration(nil), s...)
		sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
		return pct(c, 0.5)
	}
	q := max(len(samples)/4, 1)
	b.ReportMetric(float64(pct(sorted, 0.5).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(pct(sorted, 0.99).Milliseconds()), "p99-ms")
	b.ReportMetric(float64(sorted[len(sorted)-1].Milliseconds()), "max-ms")
	b.ReportMetric(renders/n, "renders/route")
	var stages []string
	for _, st := range stageNames {
		sum := e.metric("haptic_change_stage_seconds_sum", `stage="`+st+`"`) - stageBefore[st][0]
		cnt := e.metric("haptic_change_stage_seconds_count", `stage="`+st+`"`) - stageBefore[st][1]
		if cnt > 0 {
			stages = append(stages, fmt.Sprintf("%s mean %.1fms (n=%.0f)", st, 1000*sum/cnt, cnt))
		}
	}
	var total time.Duration
	for _, d := range samples {
		total += d
	}
	b.ReportMetric(float64(total.Milliseconds())/n, "mean-ms")
	b.Logf("%d routes: apply → first 200 mean %s p50 %s p99 %s max %s; first quarter p50 %s, last quarter p50 %s; unexpected %v",
		len(samples), (total / time.Duration(len(samples))).Round(time.Millisecond), pct(sorted, 0.5).Round(time.Millisecond), pct(sorted, 0.99).Round(time.Millisecond),
		sorted[len(sorted)-1].Round(time.Millisecond), quarter(samples[:q]).Round(time.Millisecond),
		quarter(samples[len(samples)-q:]).Round(time.Millisecond), unexpected)
	b.Logf("renders per route: bench fleet %.2f, idle fleet %.2f, default fleet %.2f; reloads controller %v → %v, agent %d → %d",
		renders/n, idleRenders/n, defRenders/n, reloadsBefore.controller, after.controller, reloadsBefore.agent, after.agent)
	b.Logf("stages since the first watch event: %s", strings.Join(stages, "; "))
	var fired []string
	shared := 0.0 // notifications of kinds every fleet may read (EndpointSlices of the Gateways' own Services, …)
	for res, v := range e.firedByResource() {
		if d := v - firedBefore[res]; d > 0 {
			fired = append(fired, fmt.Sprintf("%s %.0f", res, d))
			if res != "http-routes" {
				shared += d
			}
		}
	}
	sort.Strings(fired)
	b.Logf("notifications during the run by resource: %s", strings.Join(fired, ", "))
	if len(unexpected) > 0 {
		b.Errorf("statuses other than 404/200: %v", unexpected)
	}
	if idleRenders > shared {
		b.Errorf("the idle Gateway's fleet rendered %v times, more than the %v changes of shared kinds: routes on another Gateway rendered it", idleRenders, shared)
	}
}

func ptr[T any](v T) *T { return &v }

// firedByResource is haptic_debounce_fired_total by watched resource.
func (e *env) firedByResource() map[string]float64 {
	out := map[string]float64{}
	for _, res := range []string{"gateway-classes", "gateways", "http-routes", "grpc-routes", "reference-grants", "namespaces",
		"secrets", "services", "endpoints", "ingresses", "ingress-classes"} {
		out[res] = e.metric("haptic_debounce_fired_total", `resource="`+res+`"`)
	}
	return out
}
