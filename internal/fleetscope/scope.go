package fleetscope

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// Kind is what a watched resource means for fleet scoping.
type Kind int

const (
	// Shared objects may be read by any fleet's render.
	Shared Kind = iota
	// Gateway objects are read by their own Gateway's fleet.
	Gateway
	// Route objects (HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute) are read
	// by the fleets of the Gateways their spec.parentRefs name.
	Route
	// ListenerSet objects are read by the fleet of the Gateway their
	// spec.parentRef names.
	ListenerSet
)

const (
	gatewayGroup  = "gateway.networking.k8s.io"
	xGatewayGroup = "gateway.networking.x-k8s.io"
)

// KindOf classifies a watched resource by its API group and resource name.
func KindOf(group, resource string) Kind {
	if group != gatewayGroup && group != xGatewayGroup {
		return Shared
	}
	switch resource {
	case "gateways":
		return Gateway
	case "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes":
		return Route
	case "listenersets", "xlistenersets":
		return ListenerSet
	}
	return Shared
}

// Scope knows the kind of each watched resource, by its name in the config.
type Scope struct{ kinds map[string]Kind }

// New returns a Scope; a resource it is not told about is Shared.
func New(kinds map[string]Kind) Scope { return Scope{kinds: kinds} }

// Change is what differs between two snapshots, as far as fleets are concerned.
type Change struct {
	// Objects counts the objects added, changed or removed.
	Objects int
	// Everyone: a shared object changed (or one whose Gateways cannot be named),
	// or there is no earlier snapshot — every fleet renders.
	Everyone bool
	// Gateways are the Gateways a changed object is (or was) attached to.
	Gateways map[types.NamespacedName]bool
	// Stores names the stores with a changed object (nil: no earlier snapshot).
	Stores map[string]bool

	sets map[string][]types.NamespacedName // during Diff: ListenerSet → its Gateways
}

// Touches reports whether a fleet must render. gw is the fleet's Gateway (zero for
// the podSelector's fleet); allGateways is true for a fleet that renders every
// Gateway (the podSelector's without per-Gateway provisioning).
func (c Change) Touches(gw types.NamespacedName, allGateways bool) bool {
	switch {
	case c.Everyone:
		return true
	case c.Objects == 0:
		return false
	case allGateways:
		return true
	}
	return gw != types.NamespacedName{} && c.Gateways[gw]
}

// ReadBy reports whether a render that queried the stores read (its
// render.Result.StoresRead; nil: unknown) could see the change: a fleet whose
// templates read none of the changed stores renders the same bundle again.
func (c Change) ReadBy(read map[string]bool) bool {
	if c.Stores == nil || read == nil {
		return true
	}
	for name := range c.Stores {
		if read[name] {
			return true
		}
	}
	return false
}

// Diff names what changed from prev (what a fleet last rendered; nil: nothing) to
// next. Objects are immutable, so an object is changed when its Raw map is another
// one; a store both snapshots share holds no change.
func (s Scope) Diff(prev, next *snapshot.Snapshot) Change {
	if prev == nil {
		return Change{Everyone: true}
	}
	c := Change{Gateways: map[types.NamespacedName]bool{}, Stores: map[string]bool{}, sets: s.setParents(prev, next)}
	seen := map[string]bool{}
	for name, st := range next.Stores {
		seen[name] = true
		s.diffStore(&c, name, prev.Stores[name], st)
	}
	for name, st := range prev.Stores {
		if !seen[name] {
			s.diffStore(&c, name, st, nil)
		}
	}
	c.sets = nil
	return c
}

// setParents maps each ListenerSet ("<ns>/<name>", in either snapshot) to the
// Gateways its parentRef names there, so that a route attached to a set touches
// the set's Gateway's fleet.
func (s Scope) setParents(prev, next *snapshot.Snapshot) map[string][]types.NamespacedName {
	out := map[string][]types.NamespacedName{}
	for _, snap := range []*snapshot.Snapshot{prev, next} {
		for name, st := range snap.Stores {
			if s.kinds[name] != ListenerSet {
				continue
			}
			for _, o := range all(st) {
				if gw, ok := gatewayRef(dig(o.Raw, "spec", "parentRef"), o.Namespace); ok {
					out[o.Key()] = append(out[o.Key()], gw)
				}
			}
		}
	}
	return out
}

func (s Scope) diffStore(c *Change, name string, old, cur *snapshot.Store) {
	if old == cur {
		return
	}
	kind := s.kinds[name]
	before := c.Objects
	defer func() {
		if c.Objects > before {
			c.Stores[name] = true
		}
	}()
	var held, refused [2][]snapshot.Object // old, cur
	for i, st := range []*snapshot.Store{old, cur} {
		if st != nil {
			held[i], refused[i] = st.List(), st.Refused()
		}
	}
	for _, lists := range [][2][]snapshot.Object{held, refused} {
		gone, came := snapshot.DiffObjects(lists[0], lists[1])
		for _, o := range gone {
			c.add(kind, o.Raw, o.Namespace)
		}
		for _, o := range came {
			c.add(kind, o.Raw, o.Namespace)
		}
	}
}

// add records one version (nil: none) of a changed object of kind, in namespace ns.
func (c *Change) add(kind Kind, raw map[string]any, ns string) {
	if raw == nil {
		return
	}
	c.Objects++
	if c.Everyone {
		return
	}
	var gws []types.NamespacedName
	known := true
	switch kind {
	case Gateway:
		gws = []types.NamespacedName{{Namespace: ns, Name: str(dig(raw, "metadata", "name"))}}
	case Route:
		refs, _ := dig(raw, "spec", "parentRefs").([]any)
		for _, r := range refs {
			if set, ok := listenerSetRef(r, ns); ok {
				// (a set in neither snapshot serves nothing: no fleet)
				gws = append(gws, c.sets[set]...)
				continue
			}
			gw, ok := gatewayRef(r, ns)
			if !ok {
				known = false
				break
			}
			gws = append(gws, gw)
		}
	case ListenerSet:
		gws = make([]types.NamespacedName, 1)
		gws[0], known = gatewayRef(dig(raw, "spec", "parentRef"), ns)
	default:
		known = false
	}
	if !known {
		c.Everyone = true
		return
	}
	for _, gw := range gws {
		c.Gateways[gw] = true
	}
}

// gatewayRef is the Gateway a parent reference names; false for a reference to
// another kind (or one that is not an object).
func gatewayRef(ref any, ns string) (types.NamespacedName, bool) {
	m, ok := ref.(map[string]any)
	if !ok {
		return types.NamespacedName{}, false
	}
	group, hasGroup := m["group"]
	kind, hasKind := m["kind"]
	if (hasGroup && str(group) != gatewayGroup) || (hasKind && str(kind) != "Gateway") {
		return types.NamespacedName{}, false
	}
	if n, ok := m["namespace"]; ok {
		ns = str(n)
	}
	return types.NamespacedName{Namespace: ns, Name: str(m["name"])}, true
}

// listenerSetRef is the "<ns>/<name>" of the ListenerSet a parent reference names;
// false for a reference to another kind.
func listenerSetRef(ref any, ns string) (string, bool) {
	m, ok := ref.(map[string]any)
	if !ok {
		return "", false
	}
	group, hasGroup := m["group"]
	if (hasGroup && str(group) != gatewayGroup) || str(m["kind"]) != "ListenerSet" {
		return "", false
	}
	if n, ok := m["namespace"]; ok {
		ns = str(n)
	}
	return ns + "/" + str(m["name"]), true
}

// all is a store's objects, held and refused (nil store: none).
func all(st *snapshot.Store) []snapshot.Object {
	if st == nil {
		return nil
	}
	held, refused := st.List(), st.Refused()
	if len(refused) == 0 {
		return held
	}
	return append(append(make([]snapshot.Object, 0, len(held)+len(refused)), held...), refused...)
}

func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
