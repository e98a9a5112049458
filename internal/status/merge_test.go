package status

import (
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestMergeKeepsTransitionTimes(t *testing.T) {
	old := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	in := base()
	in.Programmed = nil
	in.HTTPRoutes = []*gwv1.HTTPRoute{httpRoute("gw", "r", []gwv1.ParentReference{parent("gw")}, nil)}
	gk := types.NamespacedName{Namespace: "gw", Name: "gw"}
	rk := types.NamespacedName{Namespace: "gw", Name: "r"}

	first := Compute(in)
	gwCur := MergeGateway(first.Gateways[gk], gwv1.GatewayStatus{}, old)
	rtCur := MergeRoute(first.HTTPRoutes[rk], gwv1.RouteStatus{}, old)

	// Same input: the merged status equals the current one (no write).
	again := Compute(in)
	if g := MergeGateway(again.Gateways[gk], gwCur, now); !Equal(g, gwCur) {
		t.Errorf("unchanged Gateway status differs:\n%+v\n%+v", g, gwCur)
	}
	if r := MergeRoute(again.HTTPRoutes[rk], rtCur, now); !Equal(r, rtCur) {
		t.Errorf("unchanged route status differs:\n%+v\n%+v", r, rtCur)
	}

	// Programmed flips: only that condition gets the new time.
	in.Programmed = map[types.NamespacedName]bool{gk: true}
	g := MergeGateway(Compute(in).Gateways[gk], gwCur, now)
	if Equal(g, gwCur) {
		t.Fatal("a changed status compares equal")
	}
	if c := condOf(t, g.Conditions, "Accepted"); !c.LastTransitionTime.Equal(&old) {
		t.Errorf("Accepted transition time = %v, want the old one", c.LastTransitionTime)
	}
	if c := condOf(t, g.Conditions, "Programmed"); !c.LastTransitionTime.Equal(&now) || c.Status != metav1.ConditionTrue {
		t.Errorf("Programmed = %+v, want True at now", c)
	}
	if c := condOf(t, g.Listeners[0].Conditions, "Programmed"); !c.LastTransitionTime.Equal(&now) {
		t.Errorf("listener Programmed transition time = %v", c.LastTransitionTime)
	}
	if c := condOf(t, g.Listeners[0].Conditions, "Accepted"); !c.LastTransitionTime.Equal(&old) {
		t.Errorf("listener Accepted transition time = %v", c.LastTransitionTime)
	}
}

func TestEqualNilAndEmpty(t *testing.T) {
	a := gwv1.ListenerStatus{Name: "x", SupportedKinds: nil, Conditions: []metav1.Condition{}}
	b := gwv1.ListenerStatus{Name: "x", SupportedKinds: []gwv1.RouteGroupKind{}}
	if !Equal(a, b) {
		t.Error("nil and empty lists differ")
	}
}

func TestIngressClassOf(t *testing.T) {
	for raw, want := range map[string]string{
		``:                               "haptic",
		`{}`:                             "haptic",
		`{"ingressClass":"public"}`:      "public",
		`{"ingressClass":""}`:            "haptic",
		`{"ingressClass":3}`:             "haptic",
		`{"httpPort":8080,"x":"haptic"}`: "haptic",
	} {
		if got := IngressClassOf([]byte(raw)); got != want {
			t.Errorf("IngressClassOf(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestOwnsIngress(t *testing.T) {
	ing := func(class *string, legacy string) *networkingv1.Ingress {
		i := &networkingv1.Ingress{Spec: networkingv1.IngressSpec{IngressClassName: class}}
		if legacy != "" {
			i.Annotations = map[string]string{LegacyIngressAnnotation: legacy}
		}
		return i
	}
	for _, tc := range []struct {
		name      string
		ing       *networkingv1.Ingress
		isDefault bool
		want      bool
	}{
		{"our class", ing(ptr("haptic"), ""), false, true},
		{"another class", ing(ptr("nginx"), ""), true, false},
		{"className wins over the annotation", ing(ptr("nginx"), "haptic"), false, false},
		{"legacy annotation", ing(nil, "haptic"), false, true},
		{"legacy annotation of another class", ing(nil, "nginx"), true, false},
		{"no class, we are the default", ing(nil, ""), true, true},
		{"no class, not the default", ing(nil, ""), false, false},
	} {
		if got := OwnsIngress(tc.ing, "haptic", tc.isDefault); got != tc.want {
			t.Errorf("%s: OwnsIngress = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !IsDefaultClass(&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{DefaultClassAnnotation: "true"}}}) {
		t.Error("default class not recognised")
	}
}

func TestIngressLoadBalancer(t *testing.T) {
	lb := IngressLoadBalancer([]string{"10.244.0.12", "10.244.0.3", "10.244.0.12", "lb.example.com"})
	want := []networkingv1.IngressLoadBalancerIngress{{IP: "10.244.0.3"}, {IP: "10.244.0.12"}, {Hostname: "lb.example.com"}}
	if !Equal(lb.Ingress, want) {
		t.Errorf("ingress = %+v, want %+v", lb.Ingress, want)
	}
	if len(IngressLoadBalancer(nil).Ingress) != 0 {
		t.Error("no addresses must give an empty list")
	}
}

// EqualRoute answers as Equal: every field of a route status, changed one at a time.
func TestEqualRouteAgreesWithEqual(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	base := func() gwv1.RouteStatus {
		ns, sec, port := gwv1.Namespace("ns"), gwv1.SectionName("http"), gwv1.PortNumber(80)
		g, k := gwv1.Group("gateway.networking.k8s.io"), gwv1.Kind("Gateway")
		return gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{{
			ParentRef:      gwv1.ParentReference{Group: &g, Kind: &k, Namespace: &ns, Name: "gw", SectionName: &sec, Port: &port},
			ControllerName: "haproxy-haptic.org/controller",
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, ObservedGeneration: 1,
				LastTransitionTime: t0, Reason: "Accepted", Message: "ok"}},
		}}}
	}
	changes := map[string]func(*gwv1.RouteStatus){
		"nothing": func(*gwv1.RouteStatus) {},
		"same time elsewhere": func(s *gwv1.RouteStatus) {
			s.Parents[0].Conditions[0].LastTransitionTime = metav1.NewTime(t0.In(time.FixedZone("x", 3600)))
		},
		"time": func(s *gwv1.RouteStatus) {
			s.Parents[0].Conditions[0].LastTransitionTime = metav1.NewTime(t0.Add(time.Second))
		},
		"type":             func(s *gwv1.RouteStatus) { s.Parents[0].Conditions[0].Type = "ResolvedRefs" },
		"status":           func(s *gwv1.RouteStatus) { s.Parents[0].Conditions[0].Status = metav1.ConditionFalse },
		"generation":       func(s *gwv1.RouteStatus) { s.Parents[0].Conditions[0].ObservedGeneration = 2 },
		"reason":           func(s *gwv1.RouteStatus) { s.Parents[0].Conditions[0].Reason = "X" },
		"message":          func(s *gwv1.RouteStatus) { s.Parents[0].Conditions[0].Message = "x" },
		"no conditions":    func(s *gwv1.RouteStatus) { s.Parents[0].Conditions = nil },
		"empty conditions": func(s *gwv1.RouteStatus) { s.Parents[0].Conditions = []metav1.Condition{} },
		"controller":       func(s *gwv1.RouteStatus) { s.Parents[0].ControllerName = "other" },
		"name":             func(s *gwv1.RouteStatus) { s.Parents[0].ParentRef.Name = "gw2" },
		"no group":         func(s *gwv1.RouteStatus) { s.Parents[0].ParentRef.Group = nil },
		"kind":             func(s *gwv1.RouteStatus) { k := gwv1.Kind("ListenerSet"); s.Parents[0].ParentRef.Kind = &k },
		"namespace copy":   func(s *gwv1.RouteStatus) { ns := gwv1.Namespace("ns"); s.Parents[0].ParentRef.Namespace = &ns },
		"namespace":        func(s *gwv1.RouteStatus) { ns := gwv1.Namespace("other"); s.Parents[0].ParentRef.Namespace = &ns },
		"no section":       func(s *gwv1.RouteStatus) { s.Parents[0].ParentRef.SectionName = nil },
		"port":             func(s *gwv1.RouteStatus) { p := gwv1.PortNumber(81); s.Parents[0].ParentRef.Port = &p },
		"no parents":       func(s *gwv1.RouteStatus) { s.Parents = nil },
		"empty parents":    func(s *gwv1.RouteStatus) { s.Parents = []gwv1.RouteParentStatus{} },
		"two parents":      func(s *gwv1.RouteStatus) { s.Parents = append(s.Parents, s.Parents[0]) },
	}
	differ := 0
	for name, change := range changes {
		a, b := base(), base()
		change(&b)
		want := Equal(a, b)
		if got := EqualRoute(a, b); got != want {
			t.Errorf("%s: EqualRoute %v, Equal %v", name, got, want)
		}
		if !want {
			differ++
		}
	}
	if differ < len(changes)-4 {
		t.Errorf("only %d of %d changes differ: the cases test too little", differ, len(changes))
	}
	if !EqualRoute(gwv1.RouteStatus{}, gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{}}) {
		t.Error("nil and empty parents differ")
	}
}
