package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

func TestRouteParents(t *testing.T) {
	from := func(f gwv1.FromNamespaces, sel map[string]string) func(*Input) {
		return func(in *Input) {
			rn := &gwv1.RouteNamespaces{From: &f}
			if sel != nil {
				rn.Selector = &metav1.LabelSelector{MatchLabels: sel}
			}
			in.Gateways[0].Spec.Listeners[0].AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: rn}
		}
	}
	listeners := func(ls ...gwv1.Listener) func(*Input) {
		return func(in *Input) { in.Gateways[0].Spec.Listeners = ls }
	}
	gwParent := func(mod func(*gwv1.ParentReference)) []gwv1.ParentReference {
		p := gwv1.ParentReference{Name: "gw", Namespace: ptr(gwv1.Namespace("gw"))}
		if mod != nil {
			mod(&p)
		}
		return []gwv1.ParentReference{p}
	}
	for _, tc := range []struct {
		name     string
		mutate   func(*Input)
		route    *gwv1.HTTPRoute
		accepted string
		resolved string
	}{
		{name: "accepted", route: httpRoute("gw", "r", gwParent(nil), nil, svc("echo", 8080)),
			accepted: "True/Accepted", resolved: "True/ResolvedRefs"},
		{name: "sectionName matches", route: httpRoute("gw", "r", gwParent(func(p *gwv1.ParentReference) { p.SectionName = ptr(gwv1.SectionName("http")) }), nil),
			accepted: "True/Accepted", resolved: "True/ResolvedRefs"},
		{name: "no such sectionName", route: httpRoute("gw", "r", gwParent(func(p *gwv1.ParentReference) { p.SectionName = ptr(gwv1.SectionName("https")) }), nil),
			accepted: "False/NoMatchingParent", resolved: "True/ResolvedRefs"},
		{name: "port matches", route: httpRoute("gw", "r", gwParent(func(p *gwv1.ParentReference) { p.Port = ptr(gwv1.PortNumber(80)) }), nil),
			accepted: "True/Accepted", resolved: "True/ResolvedRefs"},
		{name: "no such port", route: httpRoute("gw", "r", gwParent(func(p *gwv1.ParentReference) { p.Port = ptr(gwv1.PortNumber(81)) }), nil),
			accepted: "False/NoMatchingParent", resolved: "True/ResolvedRefs"},
		{name: "sectionName and port disagree", route: httpRoute("gw", "r", gwParent(func(p *gwv1.ParentReference) {
			p.SectionName = ptr(gwv1.SectionName("http"))
			p.Port = ptr(gwv1.PortNumber(443))
		}), nil),
			accepted: "False/NoMatchingParent", resolved: "True/ResolvedRefs"},
		{name: "other namespace, From=Same (default)", route: httpRoute("apps", "r", gwParent(nil), nil),
			accepted: "False/NotAllowedByListeners", resolved: "True/ResolvedRefs"},
		{name: "other namespace, From=All", mutate: from(gwv1.NamespacesFromAll, nil), route: httpRoute("apps", "r", gwParent(nil), nil),
			accepted: "True/Accepted", resolved: "True/ResolvedRefs"},
		{name: "From=Selector matches", mutate: from(gwv1.NamespacesFromSelector, map[string]string{"team": "a"}), route: httpRoute("apps", "r", gwParent(nil), nil),
			accepted: "True/Accepted", resolved: "True/ResolvedRefs"},
		{name: "From=Selector does not match", mutate: from(gwv1.NamespacesFromSelector, map[string]string{"team": "a"}), route: httpRoute("other", "r", gwParent(nil), nil),
			accepted: "False/NotAllowedByListeners", resolved: "True/ResolvedRefs"},
		{name: "From=None", mutate: from(gwv1.NamespacesFromNone, nil), route: httpRoute("gw", "r", gwParent(nil), nil),
			accepted: "False/NotAllowedByListeners", resolved: "True/ResolvedRefs"},
		{name: "kind not allowed", mutate: func(in *Input) {
			in.Gateways[0].Spec.Listeners[0].AllowedRoutes = &gwv1.AllowedRoutes{Kinds: []gwv1.RouteGroupKind{{Kind: "GRPCRoute"}}}
		}, route: httpRoute("gw", "r", gwParent(nil), nil),
			accepted: "False/NotAllowedByListeners", resolved: "True/ResolvedRefs"},
		{name: "listener is invalid", mutate: listeners(gwv1.Listener{Name: "tcp", Port: 80, Protocol: gwv1.TCPProtocolType}),
			route:    httpRoute("gw", "r", gwParent(nil), nil),
			accepted: "False/NotAllowedByListeners", resolved: "True/ResolvedRefs"},
		{name: "hostname matches exactly", mutate: listeners(httpListener("http", 80, "www.example.com")),
			route:    httpRoute("gw", "r", gwParent(nil), []string{"www.example.com"}),
			accepted: "True/Accepted", resolved: "True/ResolvedRefs"},
		{name: "hostname under a wildcard listener", mutate: listeners(httpListener("http", 80, "*.example.com")),
			route:    httpRoute("gw", "r", gwParent(nil), []string{"other.test", "a.b.example.com"}),
			accepted: "True/Accepted", resolved: "True/ResolvedRefs"},
		{name: "wildcard route under a specific listener", mutate: listeners(httpListener("http", 80, "www.example.com")),
			route:    httpRoute("gw", "r", gwParent(nil), []string{"*.example.com"}),
			accepted: "True/Accepted", resolved: "True/ResolvedRefs"},
		{name: "no hostname intersection", mutate: listeners(httpListener("http", 80, "*.example.com")),
			route:    httpRoute("gw", "r", gwParent(nil), []string{"example.com", "www.example.org"}),
			accepted: "False/NoMatchingListenerHostname", resolved: "True/ResolvedRefs"},
		{name: "backend not found", route: httpRoute("gw", "r", gwParent(nil), nil, svc("missing", 80)),
			accepted: "True/Accepted", resolved: "False/BackendNotFound"},
		{name: "backend port not on the Service", route: httpRoute("gw", "r", gwParent(nil), nil, svc("echo", 9999)),
			accepted: "True/Accepted", resolved: "False/BackendNotFound"},
		{name: "backend of an unsupported kind", route: httpRoute("gw", "r", gwParent(nil), nil,
			gwv1.BackendObjectReference{Group: ptr(gwv1.Group("example.com")), Kind: ptr(gwv1.Kind("Bucket")), Name: "b"}),
			accepted: "True/Accepted", resolved: "False/InvalidKind"},
		{name: "cross-namespace backend without grant", route: httpRoute("gw", "r", gwParent(nil), nil,
			gwv1.BackendObjectReference{Namespace: ptr(gwv1.Namespace("apps")), Name: "echo", Port: ptr(gwv1.PortNumber(8080))}),
			accepted: "True/Accepted", resolved: "False/RefNotPermitted"},
		{name: "cross-namespace backend with grant", mutate: func(in *Input) {
			in.ReferenceGrants = []*gwv1beta1.ReferenceGrant{grant("apps", Group, "HTTPRoute", "gw", "", "Service")}
		}, route: httpRoute("gw", "r", gwParent(nil), nil,
			gwv1.BackendObjectReference{Namespace: ptr(gwv1.Namespace("apps")), Name: "echo", Port: ptr(gwv1.PortNumber(8080))}),
			accepted: "True/Accepted", resolved: "True/ResolvedRefs"},
		{name: "grant for another kind", mutate: func(in *Input) {
			in.ReferenceGrants = []*gwv1beta1.ReferenceGrant{grant("apps", Group, "GRPCRoute", "gw", "", "Service")}
		}, route: httpRoute("gw", "r", gwParent(nil), nil,
			gwv1.BackendObjectReference{Namespace: ptr(gwv1.Namespace("apps")), Name: "echo", Port: ptr(gwv1.PortNumber(8080))}),
			accepted: "True/Accepted", resolved: "False/RefNotPermitted"},
		{name: "unsupported filter", route: func() *gwv1.HTTPRoute {
			rt := httpRoute("gw", "r", gwParent(nil), nil)
			rt.Spec.Rules[0].Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterExtensionRef,
				ExtensionRef: &gwv1.LocalObjectReference{Group: "example.com", Kind: "Thing", Name: "x"}}}
			return rt
		}(), accepted: "False/UnsupportedValue", resolved: "True/ResolvedRefs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			in.HTTPRoutes = []*gwv1.HTTPRoute{tc.route}
			r := Compute(in)
			st, ok := r.HTTPRoutes[types.NamespacedName{Namespace: tc.route.Namespace, Name: "r"}]
			if !ok || len(st.Parents) != 1 {
				t.Fatalf("route status = %+v, %v", st, ok)
			}
			p := st.Parents[0]
			if p.ControllerName != ControllerName {
				t.Errorf("controllerName = %q", p.ControllerName)
			}
			sr := func(c metav1.Condition) string { return string(c.Status) + "/" + c.Reason }
			acc, res := condOf(t, p.Conditions, "Accepted"), condOf(t, p.Conditions, "ResolvedRefs")
			if sr(acc) != tc.accepted {
				t.Errorf("Accepted = %s (%s), want %s", sr(acc), acc.Message, tc.accepted)
			}
			if sr(res) != tc.resolved {
				t.Errorf("ResolvedRefs = %s (%s), want %s", sr(res), res.Message, tc.resolved)
			}
			if acc.ObservedGeneration != 7 || res.ObservedGeneration != 7 {
				t.Errorf("observedGeneration = %d, %d", acc.ObservedGeneration, res.ObservedGeneration)
			}
			attached := r.Gateways[types.NamespacedName{Namespace: "gw", Name: "gw"}].Listeners[0].AttachedRoutes
			if want := map[bool]int32{true: 1, false: 0}[acc.Status == metav1.ConditionTrue]; attached != want {
				t.Errorf("attachedRoutes = %d, want %d", attached, want)
			}
		})
	}
}

func TestRouteParentsOfOtherControllersKept(t *testing.T) {
	in := base()
	theirs := gwv1.RouteParentStatus{ParentRef: parent("elsewhere"), ControllerName: "example.com/other",
		Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted"}}}
	stale := gwv1.RouteParentStatus{ParentRef: parent("old"), ControllerName: ControllerName,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted"}}}
	rt := httpRoute("gw", "r", []gwv1.ParentReference{parent("elsewhere"), parent("gw")}, nil)
	rt.Status.Parents = []gwv1.RouteParentStatus{theirs, stale}
	detached := httpRoute("gw", "detached", []gwv1.ParentReference{parent("elsewhere")}, nil)
	detached.Status.Parents = []gwv1.RouteParentStatus{stale, theirs}
	unrelated := httpRoute("gw", "unrelated", []gwv1.ParentReference{parent("elsewhere")}, nil)
	unrelated.Status.Parents = []gwv1.RouteParentStatus{theirs}
	in.HTTPRoutes = []*gwv1.HTTPRoute{rt, detached, unrelated}
	r := Compute(in)
	st := r.HTTPRoutes[types.NamespacedName{Namespace: "gw", Name: "r"}]
	if len(st.Parents) != 2 || !Equal(st.Parents[0], theirs) || st.Parents[1].ParentRef.Name != "gw" {
		t.Errorf("parents = %+v", st.Parents)
	}
	st = r.HTTPRoutes[types.NamespacedName{Namespace: "gw", Name: "detached"}]
	if len(st.Parents) != 1 || !Equal(st.Parents[0], theirs) {
		t.Errorf("detached parents = %+v (our stale entry must go, theirs stay)", st.Parents)
	}
	if _, ok := r.HTTPRoutes[types.NamespacedName{Namespace: "gw", Name: "unrelated"}]; ok {
		t.Error("a route that never concerned us got a status")
	}
}

func TestGRPCRoute(t *testing.T) {
	in := base()
	in.GRPCRoutes = []*gwv1.GRPCRoute{{ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: "g", Generation: 2},
		Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{parent("gw")}},
			Rules: []gwv1.GRPCRouteRule{{BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: svc("nope", 1)}}}}}}}}
	st := Compute(in).GRPCRoutes[types.NamespacedName{Namespace: "gw", Name: "g"}]
	if len(st.Parents) != 1 {
		t.Fatalf("parents = %+v", st.Parents)
	}
	wantCond(t, st.Parents[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCond(t, st.Parents[0].Conditions, "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound")
}

func TestHostnamesMatch(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"www.example.com", "www.example.com", true},
		{"www.example.com", "WWW.Example.com", true},
		{"www.example.com", "example.com", false},
		{"*.example.com", "www.example.com", true},
		{"*.example.com", "a.b.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "www.example.org", false},
		{"*.example.com", "*.example.com", true},
		{"*.example.com", "*.a.example.com", true},
		{"*.a.example.com", "*.example.com", true},
		{"*.a.example.com", "*.b.example.com", false},
		{"*.example.com", "xexample.com", false},
	} {
		if got := HostnamesMatch(tc.a, tc.b); got != tc.want {
			t.Errorf("HostnamesMatch(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := HostnamesMatch(tc.b, tc.a); got != tc.want {
			t.Errorf("HostnamesMatch(%q, %q) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}
