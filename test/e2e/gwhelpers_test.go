package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// gwEnv is a test's Gateway API client and GatewayClass (named after the test's
// namespace, served by the test's controller only).
type gwEnv struct {
	*env
	gw    gwclient.Interface
	class string
}

// setupGateways deploys the default libraries (base, ingress, gateway) with
// per-Gateway HAProxy pods, as make run does, and creates the test's GatewayClass.
func setupGateways(t *testing.T, overlay string) *gwEnv {
	t.Helper()
	e := setupLibraries(t, 1, overlay, "base", "ingress", "gateway")
	cfg := rest.CopyConfig(e.c.REST)
	cfg.QPS, cfg.Burst = 500, 1000
	gw, err := gwclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := &gwEnv{env: e, gw: gw, class: e.ns}
	if _, err := gw.GatewayV1().GatewayClasses().Create(e.ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: g.class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: gwv1.GatewayController(e.controllerName)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = gw.GatewayV1().GatewayClasses().Delete(context.Background(), g.class, metav1.DeleteOptions{})
	})
	return g
}

// createGateway creates a Gateway with one HTTP listener on port 80.
func (g *gwEnv) createGateway(name string) error {
	_, err := g.gw.GatewayV1().Gateways(g.ns).Create(g.ctx, &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(g.class), Listeners: []gwv1.Listener{{
			Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType}}},
	}, metav1.CreateOptions{})
	return err
}

// gatewayAddress waits until the Gateway is Programmed with an address and
// answers (404 for an unknown host).
func (g *gwEnv) gatewayAddress(name string, within time.Duration) (string, error) {
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) && g.ctx.Err() == nil {
		obj, err := g.gw.GatewayV1().Gateways(g.ns).Get(g.ctx, name, metav1.GetOptions{})
		if err == nil && len(obj.Status.Addresses) > 0 {
			for _, c := range obj.Status.Conditions {
				if c.Type == string(gwv1.GatewayConditionProgrammed) && c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.Generation {
					addr := obj.Status.Addresses[0].Value
					if code, _, _ := g.getGateway(addr, "unknown.example.com", "/"); code == 404 {
						return addr, nil
					}
				}
			}
		}
		last = fmt.Sprint(err)
		if obj != nil {
			last = fmt.Sprintf("%+v", obj.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("gateway %s: no answering address after %s; last %s", name, within, last)
}

// httpRoute is a route host → the echo Service (port 80) attached to gateway.
func httpRoute(name, gateway, host, path string) *gwv1.HTTPRoute {
	return httpRouteTo(name, gateway, host, path, "echo")
}

// httpRouteTo is httpRoute to Service service.
func httpRouteTo(name, gateway, host, path, service string) *gwv1.HTTPRoute {
	port := gwv1.PortNumber(80)
	prefix := gwv1.PathMatchPathPrefix
	return &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: gwv1.ObjectName(gateway)}}},
			Hostnames:       []gwv1.Hostname{gwv1.Hostname(host)},
			Rules: []gwv1.HTTPRouteRule{{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &prefix, Value: &path}}},
				BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
					Name: gwv1.ObjectName(service), Port: &port}}}}}},
		},
	}
}

// routeAccepted reports whether the test's controller accepted the route (and
// resolved its references) for its current generation.
func (g *gwEnv) routeAccepted(rt *gwv1.HTTPRoute) bool {
	for _, p := range rt.Status.Parents {
		if string(p.ControllerName) != g.controllerName {
			continue
		}
		acc, res := false, false
		for _, c := range p.Conditions {
			cur := c.Status == metav1.ConditionTrue && c.ObservedGeneration == rt.Generation
			acc = acc || c.Type == string(gwv1.RouteConditionAccepted) && cur
			res = res || c.Type == string(gwv1.RouteConditionResolvedRefs) && cur
		}
		return acc && res
	}
	return false
}

// budgetRow is one line of a budget table: a measured value against its budget.
type budgetRow struct {
	what     string
	measured float64
	budget   float64
	unit     string
}

// checkBudgets prints the table and fails the test for every row over budget.
func checkBudgets(t *testing.T, title string, rows []budgetRow) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%-46s %14s %14s  %s\n", title, "measure", "measured", "budget", "verdict")
	for _, r := range rows {
		verdict := "ok"
		if r.measured > r.budget {
			verdict = "OVER BUDGET"
		}
		fmt.Fprintf(&b, "%-46s %11.1f %-2s %11.1f %-2s  %s\n", r.what, r.measured, r.unit, r.budget, r.unit, verdict)
	}
	t.Log("\n" + b.String())
	for _, r := range rows {
		if r.measured > r.budget {
			t.Errorf("%s: %.1f %s over its budget of %.1f %s", r.what, r.measured, r.unit, r.budget, r.unit)
		}
	}
}
