package fleetscope

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

var (
	gwA = types.NamespacedName{Namespace: "infra", Name: "a"}
	gwB = types.NamespacedName{Namespace: "infra", Name: "b"}
	def = types.NamespacedName{}
)

var scope = New(map[string]Kind{
	"gateways":      KindOf("gateway.networking.k8s.io", "gateways"),
	"http-routes":   KindOf("gateway.networking.k8s.io", "httproutes"),
	"listener-sets": KindOf("gateway.networking.x-k8s.io", "xlistenersets"),
	"sets":          KindOf("gateway.networking.k8s.io", "listenersets"),
	"services":      KindOf("", "services"),
})

func obj(ns, name string, spec map[string]any) snapshot.Object {
	return snapshot.Object{Namespace: ns, Name: name, Raw: map[string]any{
		"metadata": map[string]any{"namespace": ns, "name": name}, "spec": spec}}
}

func route(ns, name string, parents ...any) snapshot.Object {
	return obj(ns, name, map[string]any{"parentRefs": parents})
}

func ref(ns, name string) map[string]any {
	return map[string]any{"namespace": ns, "name": name}
}

func snap(stores map[string][]snapshot.Object) *snapshot.Snapshot {
	s := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{}}
	for name, objs := range stores {
		s.Stores[name] = snapshot.NewStore(name, nil, nil, objs)
	}
	return s
}

// with returns prev with one store replaced.
func with(prev *snapshot.Snapshot, name string, objs ...snapshot.Object) *snapshot.Snapshot {
	s := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{}}
	for n, st := range prev.Stores {
		s.Stores[n] = st
	}
	s.Stores[name] = snapshot.NewStore(name, nil, nil, objs)
	return s
}

func touched(c Change) map[string]bool {
	out := map[string]bool{}
	for name, gw := range map[string]types.NamespacedName{"a": gwA, "b": gwB, "default": def} {
		out[name] = c.Touches(gw, false)
	}
	return out
}

func TestDiff(t *testing.T) {
	ra := route("apps", "r1", ref("infra", "a"))
	ga := obj("infra", "a", nil)
	base := snap(map[string][]snapshot.Object{
		"gateways":    {ga, obj("infra", "b", nil)},
		"http-routes": {ra},
		"services":    {obj("apps", "svc", nil)},
	})
	cases := []struct {
		name string
		next *snapshot.Snapshot
		want map[string]bool // fleet → renders
	}{
		{"nothing changed", base, map[string]bool{"a": false, "b": false, "default": false}},
		{"a route on a is added", with(base, "http-routes", ra, route("apps", "r2", ref("infra", "a"))),
			map[string]bool{"a": true, "b": false, "default": false}},
		// The namespace of a parentRef defaults to the route's.
		{"a route in a's namespace without one", with(base, "http-routes", ra, route("infra", "r2", map[string]any{"name": "a"})),
			map[string]bool{"a": true, "b": false, "default": false}},
		{"a route moves from a to b", with(base, "http-routes", route("apps", "r1", ref("infra", "b"))),
			map[string]bool{"a": true, "b": true, "default": false}},
		{"a route on a is deleted", with(base, "http-routes"), map[string]bool{"a": true, "b": false, "default": false}},
		{"a route without parents", with(base, "http-routes", ra, route("apps", "lonely")),
			map[string]bool{"a": false, "b": false, "default": false}},
		{"gateway b changes", with(base, "gateways", ga, obj("infra", "b", map[string]any{"x": "y"})),
			map[string]bool{"a": false, "b": true, "default": false}},
		{"a service changes", with(base, "services", obj("apps", "svc", map[string]any{"x": "y"})),
			map[string]bool{"a": true, "b": true, "default": true}},
		{"a route attached to a ListenerSet", with(base, "http-routes", ra,
			route("apps", "r3", map[string]any{"group": "gateway.networking.x-k8s.io", "kind": "XListenerSet", "name": "ls"})),
			map[string]bool{"a": true, "b": true, "default": true}},
		{"a route attached to a Service (mesh)", with(base, "http-routes", ra, route("apps", "r3", map[string]any{"group": "", "kind": "Service", "name": "s"})),
			map[string]bool{"a": true, "b": true, "default": true}},
		{"a ListenerSet on b", with(base, "listener-sets", obj("infra", "ls", map[string]any{"parentRef": map[string]any{"name": "b"}})),
			map[string]bool{"a": false, "b": true, "default": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := touched(scope.Diff(base, tc.next))
			for fleet, want := range tc.want {
				if got[fleet] != want {
					t.Errorf("fleet %s renders: %v, want %v", fleet, got[fleet], want)
				}
			}
		})
	}
}

// A route attached to a ListenerSet touches the fleet of the set's Gateway (as the
// set names it in either snapshot), not every fleet.
func TestDiffRouteOnListenerSet(t *testing.T) {
	onSet := func(name, set string) snapshot.Object {
		return route("team", name, map[string]any{"group": "gateway.networking.k8s.io", "kind": "ListenerSet", "name": set})
	}
	setOn := func(gw string) snapshot.Object {
		return obj("team", "ls", map[string]any{"parentRef": map[string]any{"name": gw, "namespace": "infra"}})
	}
	base := snap(map[string][]snapshot.Object{
		"gateways": {obj("infra", "a", nil), obj("infra", "b", nil)},
		"sets":     {setOn("b")},
	})
	cases := []struct {
		name string
		next *snapshot.Snapshot
		want map[string]bool
	}{
		{"a route on the set", with(base, "http-routes", onSet("r", "ls")), map[string]bool{"a": false, "b": true, "default": false}},
		{"a route on a set that does not exist", with(base, "http-routes", onSet("r", "nope")), map[string]bool{"a": false, "b": false, "default": false}},
		{"a route on the set as it moves to a", with(with(base, "sets", setOn("a")), "http-routes", onSet("r", "ls")),
			map[string]bool{"a": true, "b": true, "default": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := touched(scope.Diff(base, tc.next))
			for fleet, want := range tc.want {
				if got[fleet] != want {
					t.Errorf("fleet %s renders: %v, want %v", fleet, got[fleet], want)
				}
			}
		})
	}
}

// A refused object is in neither snapshot's List, but it is an input all the same:
// the render reports it left out.
func TestRefusedObjectsCount(t *testing.T) {
	bad := route("apps", "r9", ref("infra", "b"))
	bad.Refused = "spec: hostile"
	refused := snap(map[string][]snapshot.Object{"http-routes": {bad}})
	empty := snap(map[string][]snapshot.Object{"http-routes": {}})
	fixed := snap(map[string][]snapshot.Object{"http-routes": {route("apps", "r9", ref("infra", "b"))}})
	for name, c := range map[string]Change{"removed": scope.Diff(refused, empty), "fixed": scope.Diff(refused, fixed),
		"refused on arrival": scope.Diff(empty, refused)} {
		if !c.Touches(gwB, false) || c.Touches(gwA, false) {
			t.Errorf("%s: a refused route on b: %+v", name, c)
		}
	}
}

func TestNoEarlierRenderTouchesEveryone(t *testing.T) {
	c := scope.Diff(nil, snap(nil))
	if !c.Touches(gwA, false) || !c.Touches(def, false) {
		t.Error("a fleet that never rendered must render")
	}
}

func TestAllGatewaysFleetRendersOnAnyChange(t *testing.T) {
	base := snap(map[string][]snapshot.Object{"http-routes": {}})
	c := scope.Diff(base, with(base, "http-routes", route("apps", "r", ref("infra", "a"))))
	if !c.Touches(def, true) {
		t.Error("the podSelector fleet rendering every Gateway skipped a route change")
	}
	if scope.Diff(base, base).Touches(def, true) {
		t.Error("no change rendered the podSelector fleet")
	}
}

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		group, resource string
		want            Kind
	}{
		{"gateway.networking.k8s.io", "gateways", Gateway},
		{"gateway.networking.k8s.io", "grpcroutes", Route},
		{"gateway.networking.k8s.io", "gatewayclasses", Shared},
		{"gateway.networking.k8s.io", "referencegrants", Shared},
		{"gateway.networking.x-k8s.io", "xlistenersets", ListenerSet},
		{"", "services", Shared},
		{"networking.k8s.io", "ingresses", Shared},
	} {
		if got := KindOf(tc.group, tc.resource); got != tc.want {
			t.Errorf("KindOf(%q, %q) = %v, want %v", tc.group, tc.resource, got, tc.want)
		}
	}
}

// A change is seen only by renders that read one of the stores it changed.
func TestReadBy(t *testing.T) {
	prev := snap(map[string][]snapshot.Object{"services": {obj("apps", "web", nil)}, "http-routes": {route("apps", "r", ref("infra", "a"))}})
	c := scope.Diff(prev, with(prev, "services", obj("apps", "web", map[string]any{"x": "y"})))
	if len(c.Stores) != 1 || !c.Stores["services"] {
		t.Fatalf("changed stores %v, want services", c.Stores)
	}
	if c.ReadBy(map[string]bool{"http-routes": true}) {
		t.Error("a render that never read services must not see a Service change")
	}
	if !c.ReadBy(map[string]bool{"services": true}) || !c.ReadBy(nil) {
		t.Error("a render that read services (or whose reads are unknown) sees it")
	}
	if first := scope.Diff(nil, prev); !first.ReadBy(map[string]bool{}) {
		t.Error("without an earlier snapshot every render must run")
	}
}
