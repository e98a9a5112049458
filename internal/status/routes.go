package status

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// route is what the computation needs of an HTTPRoute or a GRPCRoute.
type route struct {
	kind        string
	meta        metav1.ObjectMeta
	spec        gwv1.CommonRouteSpec
	hostnames   []gwv1.Hostname
	status      gwv1.RouteStatus
	refs        []gwv1.BackendObjectReference
	unsupported []string // fields with values HAPTIC does not support
}

func httpBackendRefs(rt *gwv1.HTTPRoute) []gwv1.BackendObjectReference {
	var out []gwv1.BackendObjectReference
	for _, rule := range rt.Spec.Rules {
		for _, b := range rule.BackendRefs {
			out = append(out, b.BackendObjectReference)
		}
	}
	return out
}

func grpcBackendRefs(rt *gwv1.GRPCRoute) []gwv1.BackendObjectReference {
	var out []gwv1.BackendObjectReference
	for _, rule := range rt.Spec.Rules {
		for _, b := range rule.BackendRefs {
			out = append(out, b.BackendObjectReference)
		}
	}
	return out
}

// Filters HAPTIC does not implement.
var unsupportedHTTPFilters = map[gwv1.HTTPRouteFilterType]bool{
	gwv1.HTTPRouteFilterExtensionRef: true,
	gwv1.HTTPRouteFilterExternalAuth: true,
}

func httpUnsupported(rt *gwv1.HTTPRoute) []string {
	var out []string
	for i, rule := range rt.Spec.Rules {
		for j, f := range rule.Filters {
			if unsupportedHTTPFilters[f.Type] {
				out = append(out, fmt.Sprintf("spec.rules[%d].filters[%d].type: %s is not supported", i, j, f.Type))
			}
		}
	}
	return out
}

func grpcUnsupported(rt *gwv1.GRPCRoute) []string {
	var out []string
	for i, rule := range rt.Spec.Rules {
		for j, f := range rule.Filters {
			if f.Type == gwv1.GRPCRouteFilterExtensionRef {
				out = append(out, fmt.Sprintf("spec.rules[%d].filters[%d].type: %s is not supported", i, j, f.Type))
			}
		}
	}
	return out
}

// routeStatus computes a route's parents; ok is false when the route concerns
// neither our Gateways nor our earlier status entries.
func routeStatus(r route, in Input, ps parents, grants grants) (gwv1.RouteStatus, bool) {
	var st gwv1.RouteStatus
	had := false
	for _, p := range r.status.Parents {
		if p.ControllerName == in.ControllerName {
			had = true
			continue
		}
		st.Parents = append(st.Parents, p) // another controller's: untouched
	}
	gen := r.meta.Generation
	var resolved *metav1.Condition
	seen := map[string]bool{}
	for _, ref := range r.spec.ParentRefs {
		kind := KindGateway
		if ref.Kind != nil {
			kind = string(*ref.Kind)
		}
		if ref.Group != nil && string(*ref.Group) != Group || kind != KindGateway && kind != KindListenerSet {
			continue
		}
		ns := r.meta.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		// The parent's listeners: a Gateway's own, or a ListenerSet's (none when
		// its Gateway does not admit it).
		var listeners []*listener
		var what string
		if kind == KindGateway {
			g := ps.gateways[key(ns, string(ref.Name))]
			if g == nil {
				continue
			}
			listeners, what = g.listeners, "Gateway "+g.gw.Namespace+"/"+g.gw.Name
		} else {
			s := ps.sets[key(ns, string(ref.Name))]
			if s == nil {
				continue
			}
			listeners, what = s.listeners, "ListenerSet "+s.ls.Namespace+"/"+s.ls.Name
		}
		id := kind + " " + parentID(ref, r.meta.Namespace)
		if seen[id] {
			continue
		}
		seen[id] = true
		if resolved == nil {
			c := resolvedRefs(r, in, grants)
			resolved = &c
		}
		accepted := attach(r, ref, listeners, what, gen, in.Namespaces)
		st.Parents = append(st.Parents, gwv1.RouteParentStatus{
			ParentRef:      *ref.DeepCopy(),
			ControllerName: in.ControllerName,
			Conditions:     []metav1.Condition{accepted, *resolved},
		})
	}
	if len(seen) == 0 && !had {
		return gwv1.RouteStatus{}, false
	}
	if st.Parents == nil {
		st.Parents = []gwv1.RouteParentStatus{}
	}
	return st, true
}

func parentID(ref gwv1.ParentReference, routeNS string) string {
	ns := routeNS
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	sec, port := "", ""
	if ref.SectionName != nil {
		sec = string(*ref.SectionName)
	}
	if ref.Port != nil {
		port = fmt.Sprint(*ref.Port)
	}
	return ns + "/" + string(ref.Name) + "/" + sec + "/" + port
}

// attach matches a parentRef against the Gateway's listeners and records the
// attachment; it returns the Accepted condition.
func attach(r route, ref gwv1.ParentReference, listeners []*listener, what string, gen int64, namespaces map[string]map[string]string) metav1.Condition {
	typ := string(gwv1.RouteConditionAccepted)
	if len(r.unsupported) > 0 {
		return cond(typ, false, string(gwv1.RouteReasonUnsupportedValue), strings.Join(r.unsupported, "; "), gen)
	}
	var candidates []*listener
	for _, l := range listeners {
		if ref.SectionName != nil && *ref.SectionName != l.spec.Name {
			continue
		}
		if ref.Port != nil && *ref.Port != l.spec.Port {
			continue
		}
		candidates = append(candidates, l)
	}
	if len(candidates) == 0 {
		return cond(typ, false, string(gwv1.RouteReasonNoMatchingParent), noMatchMsg(ref, what), gen)
	}
	var allowed []*listener
	for _, l := range candidates {
		if l.valid && kindAllowed(l, r.kind) && namespaceAllowed(l, r.meta.Namespace, namespaces) {
			allowed = append(allowed, l)
		}
	}
	if len(allowed) == 0 {
		return cond(typ, false, string(gwv1.RouteReasonNotAllowedByListeners),
			fmt.Sprintf("no listener of %s allows this %s from namespace %s", what, r.kind, r.meta.Namespace), gen)
	}
	matched := 0
	for _, l := range allowed {
		if hostnamesIntersect(l.spec.Hostname, r.hostnames) {
			l.attached[r.kind+"/"+r.meta.Namespace+"/"+r.meta.Name] = true
			matched++
		}
	}
	if matched == 0 {
		return cond(typ, false, string(gwv1.RouteReasonNoMatchingListenerHostname),
			"no route hostname intersects a listener hostname", gen)
	}
	return cond(typ, true, string(gwv1.RouteReasonAccepted), "", gen)
}

func noMatchMsg(ref gwv1.ParentReference, what string) string {
	var parts []string
	if ref.SectionName != nil {
		parts = append(parts, "sectionName "+string(*ref.SectionName))
	}
	if ref.Port != nil {
		parts = append(parts, fmt.Sprintf("port %d", *ref.Port))
	}
	if len(parts) == 0 {
		return what + " has no listeners"
	}
	return "no listener matches " + strings.Join(parts, " and ")
}

func kindAllowed(l *listener, kind string) bool {
	for _, k := range l.kinds {
		if string(k.Kind) == kind {
			return true
		}
	}
	return false
}

func namespaceAllowed(l *listener, routeNS string, namespaces map[string]map[string]string) bool {
	from := gwv1.NamespacesFromSame
	var ar *gwv1.RouteNamespaces
	if l.spec.AllowedRoutes != nil && l.spec.AllowedRoutes.Namespaces != nil {
		ar = l.spec.AllowedRoutes.Namespaces
		if ar.From != nil {
			from = *ar.From
		}
	}
	switch from {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSame:
		return l.ns == routeNS
	case gwv1.NamespacesFromSelector:
		if ar.Selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(ar.Selector)
		if err != nil {
			return false
		}
		nsLabels, ok := namespaces[routeNS]
		if !ok {
			return false
		}
		return sel.Matches(labels.Set(nsLabels))
	}
	return false // None
}

// hostnamesIntersect reports whether a route with these hostnames can attach to a
// listener with this hostname (Gateway API hostname matching, wildcards included).
func hostnamesIntersect(listener *gwv1.Hostname, routeHosts []gwv1.Hostname) bool {
	if listener == nil || *listener == "" || len(routeHosts) == 0 {
		return true
	}
	for _, h := range routeHosts {
		if HostnamesMatch(string(*listener), string(h)) {
			return true
		}
	}
	return false
}

// HostnamesMatch reports whether two hostnames, either of which may be a wildcard
// (`*.example.com`), have a non-empty intersection. A wildcard matches one or more
// labels in place of `*`, never the bare suffix: `*.example.com` matches
// `a.b.example.com` and not `example.com`.
func HostnamesMatch(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	wa, wb := strings.HasPrefix(a, "*."), strings.HasPrefix(b, "*.")
	switch {
	case !wa && !wb:
		return a == b
	case wa && wb:
		sa, sb := a[1:], b[1:] // ".example.com"
		return strings.HasSuffix(sa, sb) || strings.HasSuffix(sb, sa)
	case wa:
		return strings.HasSuffix(b, a[1:]) && len(b) > len(a)-1
	default:
		return strings.HasSuffix(a, b[1:]) && len(a) > len(b)-1
	}
}

// resolvedRefs checks the route's backendRefs; the first problem sets the reason,
// the message lists every problem.
func resolvedRefs(r route, in Input, grants grants) metav1.Condition {
	typ := string(gwv1.RouteConditionResolvedRefs)
	reason := ""
	var problems []string
	add := func(rsn, msg string) {
		if reason == "" {
			reason = rsn
		}
		problems = append(problems, msg)
	}
	for _, b := range r.refs {
		grp, kind := "", "Service"
		if b.Group != nil {
			grp = string(*b.Group)
		}
		if b.Kind != nil {
			kind = string(*b.Kind)
		}
		ns := r.meta.Namespace
		if b.Namespace != nil {
			ns = string(*b.Namespace)
		}
		name := ns + "/" + string(b.Name)
		if grp != "" || kind != "Service" {
			add(string(gwv1.RouteReasonInvalidKind), fmt.Sprintf("backendRef %s: kind %s is not supported (core Service is)", name, strings.TrimPrefix(grp+"/"+kind, "/")))
			continue
		}
		if ns != r.meta.Namespace && !grants.allows(Group, r.kind, r.meta.Namespace, "", "Service", ns, string(b.Name)) {
			add(string(gwv1.RouteReasonRefNotPermitted), fmt.Sprintf("backendRef %s: no ReferenceGrant allows it", name))
			continue
		}
		ports, ok := in.Services[key(ns, string(b.Name))]
		if !ok {
			add(string(gwv1.RouteReasonBackendNotFound), fmt.Sprintf("backendRef %s: no such Service", name))
			continue
		}
		if b.Port != nil && !hasPort(ports, int32(*b.Port)) {
			add(string(gwv1.RouteReasonBackendNotFound), fmt.Sprintf("backendRef %s: the Service has no port %d", name, *b.Port))
		}
	}
	if reason == "" {
		return cond(typ, true, string(gwv1.RouteReasonResolvedRefs), "", r.meta.Generation)
	}
	sort.Strings(problems[1:])
	return cond(typ, false, reason, strings.Join(problems, "; "), r.meta.Generation)
}

func hasPort(ports []int32, p int32) bool {
	for _, x := range ports {
		if x == p {
			return true
		}
	}
	return false
}
