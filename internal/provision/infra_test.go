package provision

import (
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func gatewayWith(labels, annotations map[string]string, ports ...int) *gwv1.Gateway {
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"},
		Spec: gwv1.GatewaySpec{Infrastructure: &gwv1.GatewayInfrastructure{
			Labels: map[gwv1.LabelKey]gwv1.LabelValue{}, Annotations: map[gwv1.AnnotationKey]gwv1.AnnotationValue{}}}}
	for k, v := range labels {
		gw.Spec.Infrastructure.Labels[gwv1.LabelKey(k)] = gwv1.LabelValue(v)
	}
	for k, v := range annotations {
		gw.Spec.Infrastructure.Annotations[gwv1.AnnotationKey(k)] = gwv1.AnnotationValue(v)
	}
	for _, p := range ports {
		gw.Spec.Listeners = append(gw.Spec.Listeners, gwv1.Listener{Port: gwv1.PortNumber(p)})
	}
	return gw
}

func TestInfraOfDropsSelectorLabels(t *testing.T) {
	in := InfraOf(gatewayWith(map[string]string{"team": "a", "app": "haproxy", GatewayLabel: "x", gatewayNameLabel: "other"},
		map[string]string{"note": "n", infraKeysAnnotation: "label:app"}, 443, 80, 80), nil, map[string]string{"app": "haproxy"})
	if !maps.Equal(in.labels, map[string]string{"team": "a"}) || !maps.Equal(in.annotations, map[string]string{"note": "n"}) {
		t.Fatalf("labels %v annotations %v: selector and reserved keys must not propagate", in.labels, in.annotations)
	}
	if len(in.ports) != 2 || in.ports[0] != 80 || in.ports[1] != 443 {
		t.Fatalf("ports = %v, want [80 443]", in.ports)
	}
}

func TestInfraOfAddsListenerSetPorts(t *testing.T) {
	set := &gwv1.ListenerSet{Spec: gwv1.ListenerSetSpec{Listeners: []gwv1.ListenerEntry{{Name: "a", Port: 8443}, {Name: "b", Port: 80}}}}
	in := InfraOf(gatewayWith(nil, nil, 80), []*gwv1.ListenerSet{set}, nil)
	if !slices.Equal(in.ports, []int32{80, 8443}) {
		t.Fatalf("ports = %v, want [80 8443]: an attached ListenerSet's ports are the Gateway's", in.ports)
	}
}

func TestInfraApplyToReplacesEarlierKeys(t *testing.T) {
	meta := metav1.ObjectMeta{Labels: map[string]string{GatewayLabel: "id", "keep": "1"}, Annotations: map[string]string{"own": "x"}}
	v1 := InfraOf(gatewayWith(map[string]string{"team": "a", "tier": "edge"}, map[string]string{"note": "n"}, 80), nil, nil)
	if !v1.applyTo(&meta, "") {
		t.Fatal("first apply reported no change")
	}
	if v1.applyTo(&meta, v1.keys()) {
		t.Fatal("applying the same metadata again reported a change")
	}
	v2 := InfraOf(gatewayWith(map[string]string{"team": "b"}, nil, 80), nil, nil)
	if !v2.applyTo(&meta, v1.keys()) {
		t.Fatal("a changed infrastructure reported no change")
	}
	wantLabels := map[string]string{GatewayLabel: "id", "keep": "1", "team": "b", gatewayNameLabel: "web"}
	if !maps.Equal(meta.Labels, wantLabels) || !maps.Equal(meta.Annotations, map[string]string{"own": "x"}) {
		t.Fatalf("labels %v annotations %v; want labels %v and only the own annotation", meta.Labels, meta.Annotations, wantLabels)
	}
}

func TestGatewayServiceName(t *testing.T) {
	if got := gatewayServiceName(gatewayKey("apps", "web")); got != "web-haproxy" {
		t.Fatalf("got %q", got)
	}
	long := gatewayServiceName(gatewayKey("apps", "gw.with.dots"))
	if long != "haptic-gw-"+GatewayID(gatewayKey("apps", "gw.with.dots")) {
		t.Fatalf("a name that is no DNS label gave %q", long)
	}
}

func gatewayKey(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}
