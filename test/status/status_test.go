// Package status_test runs the status writer against the local cluster.
package status_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haproxy-haptic/haptic/internal/status/writer"
	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

// The tests here need the local cluster (root, cached binaries): make test runs
// them in its cluster phase; make bench-status runs the 1,000-route measurement.
func TestMain(m *testing.M) { os.Exit(clustertest.Main(m)) }

func needCluster(t *testing.T) *clustertest.Namespace {
	t.Helper()
	return clustertest.Start(t).NewNamespace(t)
}

func ptr[T any](v T) *T { return &v }

type env struct {
	t       *testing.T
	ns      string
	dyn     dynamic.Interface
	ctrl    gwv1.GatewayController
	class   string
	manager *writer.Manager
	writes  map[string]int
	mu      sync.Mutex
}

// newEnv creates a GatewayClass of a controller name private to this test (other
// tests may share the cluster) and a Manager serving it, not yet running.
func newEnv(t *testing.T, ns *clustertest.Namespace) *env {
	dyn, err := dynamic.NewForConfig(ns.REST)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ns: ns.Name, dyn: dyn, ctrl: gwv1.GatewayController("haproxy-haptic.org/status-test-" + ns.Name),
		class: "status-test-" + ns.Name, writes: map[string]int{}}
	// The controller's status client: its own rate limiter, as internal/controller sets it.
	cfg := rest.CopyConfig(ns.REST)
	cfg.QPS, cfg.Burst = 50, 100
	sdyn := dynamic.NewForConfigOrDie(cfg)
	e.manager = writer.New(writer.Options{
		Dynamic: sdyn, Metadata: metadata.NewForConfigOrDie(cfg), Discovery: discovery.NewDiscoveryClientForConfigOrDie(cfg),
		ControllerName: e.ctrl,
		OnWrite: func(kind string) {
			e.mu.Lock()
			e.writes[kind]++
			e.mu.Unlock()
		},
	})
	e.manager.SetIngressClass(e.class)
	e.create(writer.GatewayClasses, &gwv1.GatewayClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "GatewayClass"},
		ObjectMeta: metav1.ObjectMeta{Name: e.class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: e.ctrl},
	})
	t.Cleanup(func() {
		_ = dyn.Resource(writer.GatewayClasses).Delete(context.Background(), e.class, metav1.DeleteOptions{})
	})
	return e
}

func (e *env) run(ctx context.Context) {
	go func() { _ = e.manager.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for !e.manager.Synced() {
		if time.Now().After(deadline) {
			e.t.Fatal("informers did not sync")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *env) writeCount(kind string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.writes[kind]
}

func (e *env) create(gvr schema.GroupVersionResource, obj any) {
	e.t.Helper()
	raw, ok := obj.(map[string]any)
	if !ok {
		var err error
		if raw, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			e.t.Fatal(err)
		}
	}
	u := &unstructured.Unstructured{Object: raw}
	var c dynamic.ResourceInterface = e.dyn.Resource(gvr)
	if u.GetNamespace() != "" {
		c = e.dyn.Resource(gvr).Namespace(u.GetNamespace())
	}
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := c.Create(ctx, u, metav1.CreateOptions{})
		cancel()
		if err == nil {
			return
		}
		if attempt == 5 {
			e.t.Fatalf("create %s %s: %v", gvr.Resource, u.GetName(), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (e *env) gateway(name string, listeners ...gwv1.Listener) {
	e.create(writer.Gateways, &gwv1.Gateway{
		TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"},
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(e.class), Listeners: listeners},
	})
}

func (e *env) service(name string, port int32) {
	e.create(schema.GroupVersionResource{Version: "v1", Resource: "services"}, map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"namespace": e.ns, "name": name},
		"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(port)}}},
	})
}

func (e *env) route(name string, parent gwv1.ParentReference, backend string, port int32) {
	e.create(writer.HTTPRoutes, &gwv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{parent}},
			Hostnames:       []gwv1.Hostname{gwv1.Hostname(name + ".example.com")},
			Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{
				BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(backend), Port: ptr(gwv1.PortNumber(port))}}}}}},
		},
	})
}

func (e *env) routes() []gwv1.HTTPRoute {
	e.t.Helper()
	list, err := e.dyn.Resource(writer.HTTPRoutes).Namespace(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []gwv1.HTTPRoute
	for _, u := range list.Items {
		var r gwv1.HTTPRoute
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func (e *env) getGateway(name string) gwv1.Gateway {
	e.t.Helper()
	u, err := e.dyn.Resource(writer.Gateways).Namespace(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var g gwv1.Gateway
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &g); err != nil {
		e.t.Fatal(err)
	}
	return g
}

// ours returns the route's parent entry of our controller.
func (e *env) ours(r gwv1.HTTPRoute) *gwv1.RouteParentStatus {
	for i, p := range r.Status.Parents {
		if p.ControllerName == e.ctrl {
			return &r.Status.Parents[i]
		}
	}
	return nil
}

func condition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func isTrue(conds []metav1.Condition, typ string) bool {
	c := condition(conds, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

// waitAccepted waits until n routes have our entry Accepted=True; it returns how
// long that took.
func (e *env) waitAccepted(n int, timeout time.Duration) time.Duration {
	e.t.Helper()
	start := time.Now()
	for {
		accepted := 0
		for _, r := range e.routes() {
			if p := e.ours(r); p != nil && isTrue(p.Conditions, "Accepted") {
				accepted++
			}
		}
		if accepted >= n {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			e.t.Fatalf("%d of %d routes Accepted after %s", accepted, n, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// quiesce waits until no write happened for a second.
func (e *env) quiesce() {
	last, since := e.manager.Writes(), time.Now()
	for time.Since(since) < time.Second {
		time.Sleep(100 * time.Millisecond)
		if w := e.manager.Writes(); w != last {
			last, since = w, time.Now()
		}
	}
}

func TestStatusCluster(t *testing.T) {
	ns := needCluster(t)
	e := newEnv(t, ns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	e.service("echo", 8080)
	e.gateway("gw", gwv1.Listener{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType},
		gwv1.Listener{Name: "tcp", Port: 9000, Protocol: gwv1.TCPProtocolType})
	const n = 100
	for i := range n {
		e.route(fmt.Sprintf("r%03d", i), gwv1.ParentReference{Name: "gw"}, "echo", 8080)
	}
	e.route("missing-backend", gwv1.ParentReference{Name: "gw"}, "nope", 80)
	e.route("missing-section", gwv1.ParentReference{Name: "gw", SectionName: ptr(gwv1.SectionName("https"))}, "echo", 8080)
	e.create(writer.GRPCRoutes, &gwv1.GRPCRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "GRPCRoute"},
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "grpc"},
		Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw"}}},
			Rules: []gwv1.GRPCRouteRule{{BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: gwv1.BackendRef{
				BackendObjectReference: gwv1.BackendObjectReference{Name: "echo", Port: ptr(gwv1.PortNumber(8080))}}}}}}},
	})
	e.create(writer.Ingresses, map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"namespace": e.ns, "name": "ing"},
		"spec": map[string]any{"ingressClassName": e.class, "defaultBackend": map[string]any{
			"service": map[string]any{"name": "echo", "port": map[string]any{"number": int64(8080)}}}},
	})

	e.manager.SetAddresses([]string{"10.244.200.2", "10.244.200.1"})
	e.run(ctx)
	e.waitAccepted(n+1, 60*time.Second)
	// The configuration goes live: the Gateway becomes Programmed.
	gwKey := types.NamespacedName{Namespace: e.ns, Name: "gw"}
	e.manager.SetProgrammed(map[types.NamespacedName]int64{gwKey: e.getGateway("gw").Generation})
	deadline := time.Now().Add(30 * time.Second)
	for !isTrue(e.getGateway("gw").Status.Conditions, "Programmed") {
		if time.Now().After(deadline) {
			t.Fatalf("Gateway not Programmed: %+v", e.getGateway("gw").Status.Conditions)
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.quiesce()

	gcu, err := e.dyn.Resource(writer.GatewayClasses).Get(ctx, e.class, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var gc gwv1.GatewayClass
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(gcu.Object, &gc)
	if !isTrue(gc.Status.Conditions, "Accepted") || !isTrue(gc.Status.Conditions, "SupportedVersion") {
		t.Errorf("GatewayClass conditions = %+v", gc.Status.Conditions)
	}
	g := e.getGateway("gw")
	if !isTrue(g.Status.Conditions, "Accepted") || condition(g.Status.Conditions, "Accepted").Reason != "ListenersNotValid" {
		t.Errorf("Gateway Accepted = %+v", condition(g.Status.Conditions, "Accepted"))
	}
	if len(g.Status.Addresses) != 2 || g.Status.Addresses[0].Value != "10.244.200.1" || *g.Status.Addresses[0].Type != gwv1.IPAddressType {
		t.Errorf("Gateway addresses = %+v", g.Status.Addresses)
	}
	if len(g.Status.Listeners) != 2 {
		t.Fatalf("listeners = %+v", g.Status.Listeners)
	}
	if l := g.Status.Listeners[0]; l.AttachedRoutes != n+2 || !isTrue(l.Conditions, "Programmed") || len(l.SupportedKinds) != 2 {
		t.Errorf("http listener = %+v", l)
	}
	if c := condition(g.Status.Listeners[1].Conditions, "Accepted"); c == nil || c.Reason != "UnsupportedProtocol" {
		t.Errorf("tcp listener Accepted = %+v", c)
	}
	for _, r := range e.routes() {
		p := e.ours(r)
		if p == nil {
			t.Errorf("route %s has no status of ours", r.Name)
			continue
		}
		acc, res := condition(p.Conditions, "Accepted"), condition(p.Conditions, "ResolvedRefs")
		want := [2]string{"Accepted", "ResolvedRefs"}
		switch r.Name {
		case "missing-backend":
			want = [2]string{"Accepted", "BackendNotFound"}
		case "missing-section":
			want = [2]string{"NoMatchingParent", "ResolvedRefs"}
		}
		if acc == nil || res == nil || acc.Reason != want[0] || res.Reason != want[1] || acc.ObservedGeneration != r.Generation {
			t.Errorf("route %s: Accepted %+v ResolvedRefs %+v, want reasons %v", r.Name, acc, res, want)
		}
	}
	gu, err := e.dyn.Resource(writer.GRPCRoutes).Namespace(e.ns).Get(ctx, "grpc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var gr gwv1.GRPCRoute
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(gu.Object, &gr)
	if len(gr.Status.Parents) != 1 || !isTrue(gr.Status.Parents[0].Conditions, "Accepted") || !isTrue(gr.Status.Parents[0].Conditions, "ResolvedRefs") {
		t.Errorf("GRPCRoute status = %+v", gr.Status)
	}
	ing, err := e.dyn.Resource(writer.Ingresses).Namespace(e.ns).Get(ctx, "ing", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lb, _, _ := unstructured.NestedSlice(ing.Object, "status", "loadBalancer", "ingress")
	if fmt.Sprint(lb) != "[map[ip:10.244.200.1] map[ip:10.244.200.2]]" {
		t.Errorf("Ingress loadBalancer = %v", lb)
	}
	routeWrites := e.writeCount("HTTPRoute")
	t.Logf("writes: %v (%.2f per route)", e.writes, float64(routeWrites)/float64(n+2))
	if routeWrites > 2*(n+2) {
		t.Errorf("%d HTTPRoute status writes for %d routes", routeWrites, n+2)
	}

	// A second identical pass writes nothing.
	before := e.manager.Writes()
	written, err := e.manager.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if written != 0 || e.manager.Writes() != before {
		t.Errorf("an identical pass wrote %d statuses", written)
	}
	// A transition keeps the other conditions' times: detach the data plane.
	accepted := condition(g.Status.Conditions, "Accepted").LastTransitionTime
	e.manager.SetAddresses(nil)
	deadline = time.Now().Add(30 * time.Second)
	for {
		g = e.getGateway("gw")
		if c := condition(g.Status.Conditions, "Programmed"); c.Reason == "AddressNotAssigned" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Gateway Programmed = %+v", condition(g.Status.Conditions, "Programmed"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c := condition(g.Status.Conditions, "Accepted"); !c.LastTransitionTime.Equal(&accepted) {
		t.Errorf("Accepted lastTransitionTime moved from %v to %v", accepted, c.LastTransitionTime)
	}
}

// TestStatusBench1000 attaches 1,000 HTTPRoutes to one Gateway while the Manager
// runs and reports the status writes per route and the time until all are Accepted
// (make bench-status).
func TestStatusBench1000(t *testing.T) {
	ns := needCluster(t)
	e := newEnv(t, ns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.service("echo", 8080)
	e.gateway("gw", gwv1.Listener{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType})
	e.manager.SetAddresses([]string{"10.244.200.1"})
	e.run(ctx)

	const n = 1000
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				e.route(fmt.Sprintf("r%04d", i), gwv1.ParentReference{Name: "gw"}, "echo", 8080)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	created := time.Since(start)
	e.waitAccepted(n, 5*time.Minute)
	accepted := time.Since(start)
	e.quiesce()
	routeWrites := e.writeCount("HTTPRoute")
	perRoute := float64(routeWrites) / n
	fmt.Printf("bench-status: %d HTTPRoutes created in %s; all Accepted %s after the first create; %d HTTPRoute status writes (%.2f per route); writes by kind %v\n",
		n, created.Round(time.Millisecond), accepted.Round(time.Millisecond), routeWrites, perRoute, e.writes)
	if perRoute > 2 {
		t.Errorf("%.2f status writes per route, want ≤ 2", perRoute)
	}
	if g := e.getGateway("gw"); g.Status.Listeners[0].AttachedRoutes != n {
		t.Errorf("attachedRoutes = %d", g.Status.Listeners[0].AttachedRoutes)
	}
	before := e.manager.Writes()
	if w, err := e.manager.Pass(ctx); err != nil || w != 0 || e.manager.Writes() != before {
		t.Errorf("an identical pass wrote %d (%v)", w, err)
	}
}
