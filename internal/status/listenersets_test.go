package status

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func lset(ns, name string, created int, gwNS, gwName string, ls ...gwv1.Listener) *gwv1.ListenerSet {
	set := &gwv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 2,
		CreationTimestamp: metav1.NewTime(time.Unix(int64(1_700_000_000+created), 0))}}
	set.Spec.ParentRef = gwv1.ParentGatewayReference{Name: gwv1.ObjectName(gwName), Namespace: ptr(gwv1.Namespace(gwNS))}
	for _, l := range ls {
		set.Spec.Listeners = append(set.Spec.Listeners, gwv1.ListenerEntry{Name: l.Name, Hostname: l.Hostname, Port: l.Port,
			Protocol: l.Protocol, TLS: l.TLS, AllowedRoutes: l.AllowedRoutes})
	}
	return set
}

func entryStatus(t *testing.T, st gwv1.ListenerSetStatus, name string) gwv1.ListenerEntryStatus {
	t.Helper()
	for _, l := range st.Listeners {
		if string(l.Name) == name {
			return l
		}
	}
	t.Fatalf("no listener %s in %+v", name, st.Listeners)
	return gwv1.ListenerEntryStatus{}
}

func setParent(ns, name, section string) gwv1.ParentReference {
	p := gwv1.ParentReference{Kind: ptr(gwv1.Kind(KindListenerSet)), Name: gwv1.ObjectName(name), Namespace: ptr(gwv1.Namespace(ns))}
	if section != "" {
		p.SectionName = ptr(gwv1.SectionName(section))
	}
	return p
}

func TestListenerSets(t *testing.T) {
	in := base()
	g := gw("gw", "gw", "haptic", httpListener("http", 80, "gw.example.com"))
	g.Spec.AllowedListeners = &gwv1.AllowedListeners{Namespaces: &gwv1.ListenerNamespaces{
		From:     ptr(gwv1.NamespacesFromSelector),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}}
	in.Gateways = []*gwv1.Gateway{g}
	tcp := gwv1.Listener{Name: "tcp", Port: 80, Protocol: gwv1.TCPProtocolType}
	in.ListenerSets = []*gwv1.ListenerSet{
		// the younger of two sets in apps: its duplicate hostname loses to the older one's
		lset("apps", "young", 2, "gw", "gw", httpListener("dup", 80, "a.example.com")),
		lset("apps", "old", 1, "gw", "gw", httpListener("a", 80, "a.example.com"),
			httpListener("taken", 80, "gw.example.com"), tcp),
		lset("other", "refused", 0, "gw", "gw", httpListener("b", 80, "b.example.com")),
		lset("apps", "elsewhere", 0, "gw", "not-ours", httpListener("c", 80, "c.example.com")),
	}
	in.HTTPRoutes = []*gwv1.HTTPRoute{
		httpRoute("apps", "on-set", []gwv1.ParentReference{setParent("apps", "old", "")}, nil, svc("echo", 8080)),
		httpRoute("apps", "on-refused", []gwv1.ParentReference{setParent("other", "refused", "")}, nil, svc("echo", 8080)),
		httpRoute("gw", "gw-section-of-set", []gwv1.ParentReference{{Name: "gw", SectionName: ptr(gwv1.SectionName("a"))}}, nil, svc("echo", 8080)),
	}
	res := Compute(in)

	st := res.Gateways[types.NamespacedName{Namespace: "gw", Name: "gw"}]
	if st.AttachedListenerSets == nil || *st.AttachedListenerSets != 1 {
		t.Errorf("attachedListenerSets = %v, want 1 (old; young has no valid listener, refused is not admitted)", st.AttachedListenerSets)
	}
	if len(st.Listeners) != 1 {
		t.Errorf("the Gateway's status lists its own listeners only, got %d", len(st.Listeners))
	}

	old := res.ListenerSets[types.NamespacedName{Namespace: "apps", Name: "old"}]
	wantCond(t, old.Conditions, "Accepted", metav1.ConditionTrue, string(gwv1.ListenerSetReasonListenersNotValid))
	wantCond(t, old.Conditions, "Programmed", metav1.ConditionTrue, string(gwv1.ListenerSetReasonProgrammed))
	a := entryStatus(t, old, "a")
	wantCond(t, a.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCond(t, a.Conditions, "Conflicted", metav1.ConditionFalse, "NoConflicts")
	if a.AttachedRoutes != 1 {
		t.Errorf("listener a: attachedRoutes = %d, want 1 (on-set; a Gateway parentRef never reaches it)", a.AttachedRoutes)
	}
	taken := entryStatus(t, old, "taken")
	wantCond(t, taken.Conditions, "Accepted", metav1.ConditionFalse, "HostnameConflict")
	wantCond(t, taken.Conditions, "Programmed", metav1.ConditionFalse, "HostnameConflict")
	wantCond(t, taken.Conditions, "Conflicted", metav1.ConditionTrue, "HostnameConflict")
	wantCond(t, entryStatus(t, old, "tcp").Conditions, "Conflicted", metav1.ConditionTrue, "ProtocolConflict")
	if taken.AttachedRoutes != 0 {
		t.Errorf("a conflicted listener holds no routes, got %d", taken.AttachedRoutes)
	}

	young := res.ListenerSets[types.NamespacedName{Namespace: "apps", Name: "young"}]
	wantCond(t, young.Conditions, "Accepted", metav1.ConditionFalse, string(gwv1.ListenerSetReasonListenersNotValid))
	wantCond(t, young.Conditions, "Programmed", metav1.ConditionFalse, string(gwv1.ListenerSetReasonListenersNotValid))
	wantCond(t, entryStatus(t, young, "dup").Conditions, "Conflicted", metav1.ConditionTrue, "HostnameConflict")

	refused := res.ListenerSets[types.NamespacedName{Namespace: "other", Name: "refused"}]
	wantCond(t, refused.Conditions, "Accepted", metav1.ConditionFalse, string(gwv1.ListenerSetReasonNotAllowed))
	wantCond(t, refused.Conditions, "Programmed", metav1.ConditionFalse, string(gwv1.ListenerSetReasonNotAllowed))
	if _, ok := res.ListenerSets[types.NamespacedName{Namespace: "apps", Name: "elsewhere"}]; ok {
		t.Error("a ListenerSet of a Gateway that is not ours got a status")
	}

	onSet := res.HTTPRoutes[types.NamespacedName{Namespace: "apps", Name: "on-set"}]
	if len(onSet.Parents) != 1 || *onSet.Parents[0].ParentRef.Kind != KindListenerSet {
		t.Fatalf("on-set parents = %+v", onSet.Parents)
	}
	wantCond(t, onSet.Parents[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	onRefused := res.HTTPRoutes[types.NamespacedName{Namespace: "apps", Name: "on-refused"}]
	wantCond(t, onRefused.Parents[0].Conditions, "Accepted", metav1.ConditionFalse, string(gwv1.RouteReasonNoMatchingParent))
	viaGateway := res.HTTPRoutes[types.NamespacedName{Namespace: "gw", Name: "gw-section-of-set"}]
	wantCond(t, viaGateway.Parents[0].Conditions, "Accepted", metav1.ConditionFalse, string(gwv1.RouteReasonNoMatchingParent))
}

func TestListenerSetsNotAllowedByDefault(t *testing.T) {
	in := base()
	in.ListenerSets = []*gwv1.ListenerSet{lset("gw", "same-ns", 0, "gw", "gw", httpListener("x", 80, "x.example.com"))}
	res := Compute(in)
	wantCond(t, res.ListenerSets[types.NamespacedName{Namespace: "gw", Name: "same-ns"}].Conditions, "Accepted",
		metav1.ConditionFalse, string(gwv1.ListenerSetReasonNotAllowed))
	if n := res.Gateways[types.NamespacedName{Namespace: "gw", Name: "gw"}].AttachedListenerSets; n != nil {
		t.Errorf("a Gateway without allowedListeners reports attachedListenerSets %d", *n)
	}
}
