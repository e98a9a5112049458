package writer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haproxy-haptic/haptic/internal/status"
)

func obj(t *testing.T, apiVersion, kind string, o any) *unstructured.Unstructured {
	t.Helper()
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

// TestPassWritesOnlyChanges runs the Manager against fake clients: the first pass
// writes every status, an identical second pass writes none, and a change writes
// only what it changes.
func TestPassWritesOnlyChanges(t *testing.T) {
	const gv = "gateway.networking.k8s.io/v1"
	objs := []runtime.Object{
		obj(t, gv, "GatewayClass", &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "haptic", UID: "gc"},
			Spec: gwv1.GatewayClassSpec{ControllerName: status.ControllerName}}),
		obj(t, gv, "Gateway", &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw", UID: "gw", Generation: 1},
			Spec: gwv1.GatewaySpec{GatewayClassName: "haptic", Listeners: []gwv1.Listener{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType}}}}),
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"namespace": "ns", "name": "echo", "uid": "svc"},
			"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(8080)}}}}},
	}
	for _, name := range []string{"a", "b", "c"} {
		objs = append(objs, obj(t, gv, "HTTPRoute", &gwv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: ktypes.UID("route-" + name), Generation: 1},
			Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw"}}},
				Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{
					BackendObjectReference: gwv1.BackendObjectReference{Name: "echo", Port: func() *gwv1.PortNumber { p := gwv1.PortNumber(8080); return &p }()}}}}}}},
		}))
	}
	writes := map[string]int{}
	var mu sync.Mutex
	m, dyn, ctx := fakeManager(t, objs, func(k string) {
		mu.Lock()
		writes[k]++
		mu.Unlock()
	})
	m.SetAddresses([]string{"10.244.0.2"})
	n, err := m.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 || writes["HTTPRoute"] != 3 || writes["Gateway"] != 1 || writes["GatewayClass"] != 1 {
		t.Fatalf("first pass: %d writes %v, want 5 (class, gateway, 3 routes)", n, writes)
	}
	// The informer may or may not have seen the writes yet: either way nothing is
	// written again.
	for range 3 {
		if n, err := m.Pass(ctx); err != nil || n != 0 {
			t.Fatalf("identical pass wrote %d (%v)", n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	u, err := dyn.Resource(HTTPRoutes).Namespace("ns").Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rt gwv1.HTTPRoute
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rt)
	if len(rt.Status.Parents) != 1 || rt.Status.Parents[0].Conditions[0].Reason != "Accepted" || rt.Status.Parents[0].Conditions[0].LastTransitionTime.IsZero() {
		t.Fatalf("route status = %+v", rt.Status)
	}
	// The Gateway goes live: only the Gateway changes.
	m.SetProgrammed(m.Gateways())
	if n, err := m.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("programmed pass wrote %d (%v), want 1", n, err)
	}
	if writes["Gateway"] != 2 {
		t.Errorf("writes = %v", writes)
	}
}

// TestIngressPassSkipsSettled: an Ingress whose status a pass found right is not
// looked at again (not even converted) until it changes or the addresses do; a
// changed one is written again, and a deleted one is forgotten.
func TestIngressPassSkipsSettled(t *testing.T) {
	ingress := func(name, class string) runtime.Object {
		return obj(t, "networking.k8s.io/v1", "Ingress", &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: ktypes.UID("ing-" + name)},
			Spec:       networkingv1.IngressSpec{IngressClassName: &class}})
	}
	writes := map[string]int{}
	var mu sync.Mutex
	m, dyn, ctx := fakeManager(t, []runtime.Object{ingress("a", status.DefaultIngressClass),
		ingress("b", status.DefaultIngressClass), ingress("other", "nginx")}, func(k string) {
		mu.Lock()
		writes[k]++
		mu.Unlock()
	})
	pass := func(want int, what string) {
		t.Helper()
		if n, err := m.Pass(ctx); err != nil || n != want {
			t.Fatalf("%s: pass wrote %d (%v), want %d", what, n, err, want)
		}
	}
	// settle passes until the informer brought the writes and every Ingress is
	// settled at the version the informer holds.
	settle := func(want int) {
		t.Helper()
		for range 100 {
			pass(0, "settling")
			m.mu.Lock()
			n := len(m.settled.rv)
			m.mu.Unlock()
			if n == want {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("Ingresses settled: never %d", want)
	}
	m.SetAddresses([]string{"10.244.0.2"})
	pass(2, "first")
	settle(3)
	pass(0, "settled") // converts none of them: their typed copies are dropped
	m.typed.mu.Lock()
	for uid := range m.typed.m {
		if strings.HasPrefix(string(uid), "ing-") {
			t.Errorf("settled Ingress %s still converted by the pass", uid)
		}
	}
	m.typed.mu.Unlock()

	// Someone else clears a's status: a alone is written again.
	u, err := dyn.Resource(Ingresses).Namespace("ns").Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(u.Object, "status")
	if _, err := dyn.Resource(Ingresses).Namespace("ns").UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ { // once the informer has the cleared status
		n, err := m.Pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if n != 0 || i == 100 {
			t.Fatalf("after a's status was cleared: pass wrote %d, want 1", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	settle(3)
	// New addresses: every Ingress of ours again.
	m.SetAddresses([]string{"10.244.0.3"})
	pass(2, "new addresses")
	settle(3)
	if err := dyn.Resource(Ingresses).Namespace("ns").Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	settle(2)
	if writes["Ingress"] != 5 {
		t.Errorf("Ingress writes %d, want 5", writes["Ingress"])
	}
}

// fakeManager runs a Manager against fake clients holding objs (created through
// the client) and returns once its informers have synced; it passes only when
// asked (Pass).
func fakeManager(t *testing.T, objs []runtime.Object, onWrite func(string)) (*Manager, *dynamicfake.FakeDynamicClient, context.Context) {
	t.Helper()
	return fakeManagerWith(t, objs, Options{Debounce: time.Hour, OnWrite: onWrite})
}

// fakeManagerWith is fakeManager with opts (its clients set here).
func fakeManagerWith(t *testing.T, objs []runtime.Object, opts Options) (*Manager, *dynamicfake.FakeDynamicClient, context.Context) {
	t.Helper()
	scheme := runtime.NewScheme()
	lists := map[schema.GroupVersionResource]string{}
	for gvr, kind := range map[schema.GroupVersionResource]string{GatewayClasses: "GatewayClass", Gateways: "Gateway",
		HTTPRoutes: "HTTPRoute", GRPCRoutes: "GRPCRoute", TLSRoutes: "TLSRoute", ListenerSets: "ListenerSet", ReferenceGrants: "ReferenceGrant", BackendTLSPolicies: "BackendTLSPolicy", Services: "Service", ConfigMaps: "ConfigMap",
		Ingresses: "Ingress", IngressClasses: "IngressClass", CRDs: "CustomResourceDefinition", Secrets: "Secret"} {
		lists[gvr] = kind + "List"
	}
	// Created through the client: the fake's guess of a resource from a kind
	// (Gateway → gatewaies) would misplace objects given to its constructor.
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, lists)
	// The API server gives every change a new resourceVersion; the fake does not.
	var rv atomic.Int64
	bump := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if o, ok := a.(interface{ GetObject() runtime.Object }); ok {
			if u, ok := o.GetObject().(*unstructured.Unstructured); ok {
				u.SetResourceVersion(fmt.Sprint(rv.Add(1)))
			}
		}
		return false, nil, nil
	}
	dyn.PrependReactor("create", "*", bump)
	dyn.PrependReactor("update", "*", bump)
	for _, o := range objs {
		u := o.(*unstructured.Unstructured)
		gvr := map[string]schema.GroupVersionResource{"GatewayClass": GatewayClasses, "Gateway": Gateways,
			"HTTPRoute": HTTPRoutes, "Service": Services, "Ingress": Ingresses}[u.GetKind()]
		if _, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ms := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(ms)
	md := metadatafake.NewSimpleMetadataClient(ms)
	opts.Dynamic, opts.Metadata = dyn, md
	m := New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = m.Run(ctx) }()
	for !m.Synced() {
		time.Sleep(10 * time.Millisecond)
	}
	return m, dyn, ctx
}

// TestGatewayAddressesAndRevisions: with per-Gateway pods (SetGatewayAddresses
// non-nil) a Gateway whose pods are not known has no address, never the data
// plane's; and a Gateway is Programmed only by a revision of its current object.
func TestGatewayAddressesAndRevisions(t *testing.T) {
	const gv = "gateway.networking.k8s.io/v1"
	objs := []runtime.Object{
		obj(t, gv, "GatewayClass", &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "haptic", UID: "gc"},
			Spec: gwv1.GatewayClassSpec{ControllerName: status.ControllerName}}),
		obj(t, gv, "Gateway", &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw", UID: "gw-2", Generation: 1},
			Spec: gwv1.GatewaySpec{GatewayClassName: "haptic", Listeners: []gwv1.Listener{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType}}}}),
	}
	m, dyn, ctx := fakeManager(t, objs, nil)
	gk := ktypes.NamespacedName{Namespace: "ns", Name: "gw"}
	get := func() gwv1.GatewayStatus {
		t.Helper()
		if _, err := m.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		u, err := dyn.Resource(Gateways).Namespace("ns").Get(ctx, "gw", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var g gwv1.Gateway
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &g); err != nil {
			t.Fatal(err)
		}
		return g.Status
	}
	check := func(what string, st gwv1.GatewayStatus, addrs string, programmed metav1.ConditionStatus) {
		t.Helper()
		var got []string
		for _, a := range st.Addresses {
			got = append(got, a.Value)
		}
		p := metav1.ConditionUnknown
		for _, c := range st.Conditions {
			if c.Type == "Programmed" {
				p = c.Status
			}
		}
		if fmt.Sprint(got) != addrs || p != programmed {
			t.Errorf("%s: addresses %v Programmed %s, want %s %s", what, got, p, addrs, programmed)
		}
	}
	m.SetGatewayAddresses(map[ktypes.NamespacedName][]string{}) // per-Gateway pods, none discovered
	m.SetAddresses([]string{"10.244.0.2"})                      // the podSelector's
	// A deploy of a Gateway of that name deleted since does not program this one.
	m.SetProgrammedRevisions(map[ktypes.NamespacedName]Revision{gk: {UID: "gw-1", Generation: 1}})
	check("new Gateway", get(), "[]", metav1.ConditionFalse)
	m.SetGatewayAddresses(map[ktypes.NamespacedName][]string{gk: {"10.244.0.55"}})
	check("own pod discovered", get(), "[10.244.0.55]", metav1.ConditionFalse)
	m.SetProgrammedRevisions(map[ktypes.NamespacedName]Revision{gk: {UID: "gw-2", Generation: 1}})
	check("live on its pod", get(), "[10.244.0.55]", metav1.ConditionTrue)
	m.SetGatewayAddresses(nil) // Shared: the data plane's
	check("shared", get(), "[10.244.0.2]", metav1.ConditionTrue)
}

// A write on top of our own earlier write, while the informer still holds what the
// first one replaced: the informer's version is still stale (a pass must not see the
// old status and write again — TestIngressPassSkipsSettled failed that way now and
// then).
func TestCurrentKeepsWritesOnWrites(t *testing.T) {
	m := &Manager{written: map[ktypes.UID]written{}}
	version := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetUID("a")
		u.SetResourceVersion(rv)
		return u
	}
	informer := version("6")
	first, second := version("7"), version("8")
	m.remember(informer, first)
	if got := m.current(informer); got != first {
		t.Fatalf("after one write: current is rv %s, want 7", got.GetResourceVersion())
	}
	m.remember(first, second) // written on top of our write: the informer still has 6
	if got := m.current(informer); got != second {
		t.Fatalf("after a write on our write: current is rv %s, want 8", got.GetResourceVersion())
	}
	if got := m.current(version("7")); got != second {
		t.Fatalf("the informer at our first write: current is rv %s, want 8", got.GetResourceVersion())
	}
	caughtUp := version("8")
	if got := m.current(caughtUp); got != caughtUp || len(m.written) != 0 {
		t.Fatalf("the informer caught up: current is %p (want its own %p), %d writes remembered", got, caughtUp, len(m.written))
	}
}
