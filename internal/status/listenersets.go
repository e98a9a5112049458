package status

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ListenerSets add listeners to a Gateway from other objects, possibly in other
// namespaces. The Gateway's spec.allowedListeners says which may attach (None by
// default). An attached set's listeners follow the Gateway's own in the merged
// list, sets ordered oldest first, then by namespace/name; a listener that
// conflicts with one earlier in that list (same port with another protocol, or
// the same port and hostname) is Conflicted and not programmed — the earlier one
// keeps serving. Routes attach to a set with a parentRef of kind ListenerSet and
// then only to its listeners; a parentRef to the Gateway never reaches them.

// listenerSet is a ListenerSet whose parentRef names one of our Gateways.
type listenerSet struct {
	ls        *gwv1.ListenerSet
	gw        *gateway
	allowed   bool // spec.allowedListeners of the Gateway admits it
	listeners []*listener
}

// parentGateway is the Gateway a ListenerSet's parentRef names (false: another kind).
func parentGateway(ls *gwv1.ListenerSet) (types.NamespacedName, bool) {
	ref := ls.Spec.ParentRef
	if ref.Group != nil && string(*ref.Group) != Group || ref.Kind != nil && string(*ref.Kind) != KindGateway {
		return types.NamespacedName{}, false
	}
	ns := ls.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return key(ns, string(ref.Name)), true
}

// ListenerSetAllowed reports whether a Gateway's spec.allowedListeners admits
// ListenerSets of namespace ns (nsLabels: that namespace's labels).
func ListenerSetAllowed(gw *gwv1.Gateway, ns string, nsLabels map[string]string) bool {
	al := gw.Spec.AllowedListeners
	if al == nil || al.Namespaces == nil || al.Namespaces.From == nil {
		return false
	}
	switch *al.Namespaces.From {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSame:
		return ns == gw.Namespace
	case gwv1.NamespacesFromSelector:
		if al.Namespaces.Selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(al.Namespaces.Selector)
		return err == nil && nsLabels != nil && sel.Matches(labels.Set(nsLabels))
	}
	return false
}

// AttachedListenerSets are the ListenerSets of sets that attach to gw, in the
// order of precedence of their listeners (oldest first, then namespace/name).
func AttachedListenerSets(gw *gwv1.Gateway, sets []*gwv1.ListenerSet, namespaces map[string]map[string]string) []*gwv1.ListenerSet {
	var out []*gwv1.ListenerSet
	for _, ls := range sets {
		if p, ok := parentGateway(ls); ok && p == key(gw.Namespace, gw.Name) && ListenerSetAllowed(gw, ls.Namespace, namespaces[ls.Namespace]) {
			out = append(out, ls)
		}
	}
	sortByPrecedence(out)
	return out
}

func sortByPrecedence(sets []*gwv1.ListenerSet) {
	sort.SliceStable(sets, func(i, j int) bool {
		a, b := sets[i], sets[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
}

// entryListener is a ListenerSet entry as a Gateway listener (the same fields).
func entryListener(e gwv1.ListenerEntry) gwv1.Listener {
	return gwv1.Listener{Name: e.Name, Hostname: e.Hostname, Port: e.Port, Protocol: e.Protocol, TLS: e.TLS, AllowedRoutes: e.AllowedRoutes}
}

// attachListenerSets builds the sets whose parent is one of gateways, keyed by
// the set, and merges the admitted ones' listeners behind each Gateway's.
func attachListenerSets(in Input, gateways map[types.NamespacedName]*gateway, grants grants) map[types.NamespacedName]*listenerSet {
	out := map[types.NamespacedName]*listenerSet{}
	byGateway := map[types.NamespacedName][]*gwv1.ListenerSet{}
	for _, ls := range in.ListenerSets {
		p, ok := parentGateway(ls)
		g := gateways[p]
		if !ok || g == nil {
			continue
		}
		s := &listenerSet{ls: ls, gw: g, allowed: ListenerSetAllowed(g.gw, ls.Namespace, in.Namespaces[ls.Namespace])}
		out[key(ls.Namespace, ls.Name)] = s
		if s.allowed {
			byGateway[p] = append(byGateway[p], ls)
		}
	}
	for p, sets := range byGateway {
		g := gateways[p]
		sortByPrecedence(sets)
		// Listeners earlier in the merged list, by port: a later one that
		// conflicts with one of them is the one left out.
		earlier := map[gwv1.PortNumber][]*listener{}
		for _, l := range g.listeners {
			if routeKindsFor(l.spec.Protocol) != nil && !conflicted(l) {
				earlier[l.spec.Port] = append(earlier[l.spec.Port], l)
			}
		}
		for _, ls := range sets {
			s := out[key(ls.Namespace, ls.Name)]
			o := owner{kind: KindListenerSet, namespace: ls.Namespace, name: ls.Name, generation: ls.Generation, gw: g.gw}
			for _, e := range ls.Spec.Listeners {
				l := newListener(o, entryListener(e), in, grants)
				if reason := conflictWith(l, earlier[l.spec.Port]); reason != "" {
					markConflicted(l, reason, ls.Generation)
				} else {
					l.status.Conditions = append(l.status.Conditions,
						cond(string(gwv1.ListenerConditionConflicted), false, string(gwv1.ListenerReasonNoConflicts), "", ls.Generation))
					if routeKindsFor(l.spec.Protocol) != nil {
						earlier[l.spec.Port] = append(earlier[l.spec.Port], l)
					}
				}
				s.listeners = append(s.listeners, l)
			}
			g.sets = append(g.sets, s)
		}
	}
	return out
}

func conflicted(l *listener) bool {
	for _, c := range l.status.Conditions {
		if c.Type == string(gwv1.ListenerConditionConflicted) {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// conflictWith is the reason l conflicts with one of the listeners before it on
// its port ("" when it does not).
func conflictWith(l *listener, before []*listener) string {
	for _, b := range before {
		if l.spec.Protocol != b.spec.Protocol {
			return string(gwv1.ListenerReasonProtocolConflict)
		}
	}
	for _, b := range before {
		if hostOf(l.spec.Hostname) == hostOf(b.spec.Hostname) {
			return string(gwv1.ListenerReasonHostnameConflict)
		}
	}
	return ""
}

// markConflicted leaves a listener out: not accepted and not programmed, for the
// conflict's reason.
func markConflicted(l *listener, reason string, gen int64) {
	msg := fmt.Sprintf("port %d: %s with a listener of the Gateway or of an earlier ListenerSet", l.spec.Port, reason)
	l.valid = false
	var conds []metav1.Condition
	for _, c := range l.status.Conditions {
		switch c.Type {
		case string(gwv1.ListenerConditionAccepted), string(gwv1.ListenerConditionProgrammed):
			c = cond(c.Type, false, reason, msg, gen)
		}
		conds = append(conds, c)
	}
	l.status.Conditions = append(conds, cond(string(gwv1.ListenerConditionConflicted), true, reason, msg, gen))
}

// accepted reports whether a set is attached: admitted, and at least one of its
// listeners valid with its references resolved.
func (s *listenerSet) accepted() bool {
	if !s.allowed {
		return false
	}
	for _, l := range s.listeners {
		if l.valid && l.refsOK {
			return true
		}
	}
	return false
}

func listenerSetStatus(s *listenerSet, gwAccepted bool, in Input) gwv1.ListenerSetStatus {
	gen := s.ls.Generation
	accepted := string(gwv1.ListenerSetConditionAccepted)
	programmed := string(gwv1.ListenerSetConditionProgrammed)
	var st gwv1.ListenerSetStatus
	if !s.allowed {
		msg := fmt.Sprintf("Gateway %s/%s does not allow ListenerSets from namespace %s (spec.allowedListeners)", s.gw.gw.Namespace, s.gw.gw.Name, s.ls.Namespace)
		st.Conditions = []metav1.Condition{
			cond(accepted, false, string(gwv1.ListenerSetReasonNotAllowed), msg, gen),
			cond(programmed, false, string(gwv1.ListenerSetReasonNotAllowed), msg, gen),
		}
		return st
	}
	valid, invalid := 0, 0
	for _, l := range s.listeners {
		if l.valid && l.refsOK {
			valid++
		} else {
			invalid++
		}
		st.Listeners = append(st.Listeners, gwv1.ListenerEntryStatus{Name: l.status.Name, SupportedKinds: l.status.SupportedKinds,
			AttachedRoutes: int32(len(l.attached)), Conditions: l.status.Conditions})
	}
	acc := cond(accepted, true, string(gwv1.ListenerSetReasonAccepted), "", gen)
	prog := cond(programmed, true, string(gwv1.ListenerSetReasonProgrammed), "", gen)
	switch {
	case !gwAccepted:
		msg := fmt.Sprintf("Gateway %s/%s is not accepted", s.gw.gw.Namespace, s.gw.gw.Name)
		acc = cond(accepted, false, string(gwv1.ListenerSetReasonParentNotAccepted), msg, gen)
		prog = cond(programmed, false, string(gwv1.ListenerSetReasonParentNotAccepted), msg, gen)
	case valid == 0:
		acc = cond(accepted, false, string(gwv1.ListenerSetReasonListenersNotValid), "no listener is valid", gen)
		prog = cond(programmed, false, string(gwv1.ListenerSetReasonListenersNotValid), "no listener is valid", gen)
	case invalid > 0:
		acc = cond(accepted, true, string(gwv1.ListenerSetReasonListenersNotValid), fmt.Sprintf("%d of %d listeners are not valid", invalid, invalid+valid), gen)
	}
	if acc.Status == metav1.ConditionTrue && !in.Programmed[key(s.gw.gw.Namespace, s.gw.gw.Name)] {
		prog = cond(programmed, false, string(gwv1.ListenerSetReasonPending), "waiting for the configuration to be live on an HAProxy pod", gen)
	}
	st.Conditions = []metav1.Condition{acc, prog}
	return st
}

// attachedSets counts a Gateway's attached ListenerSets (status.attachedListenerSets).
func attachedSets(g *gateway) int32 {
	var n int32
	for _, s := range g.sets {
		if s.accepted() {
			n++
		}
	}
	return n
}

// parents are what routes' parentRefs can name: our Gateways, and the
// ListenerSets whose parent is one of them.
type parents struct {
	gateways map[types.NamespacedName]*gateway
	sets     map[types.NamespacedName]*listenerSet
}
