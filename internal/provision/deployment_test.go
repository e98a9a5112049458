package provision

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// template is the chart's HAProxy Deployment, the one copied for each Gateway.
func template() *appsv1.Deployment {
	labels := map[string]string{"app": "haproxy", "release": "r1"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "haproxy", Namespace: "haptic", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "haproxy"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "haproxy", Image: "haproxy:3"}}},
			},
		},
	}
}

func TestEnsureCopiesTheTemplateWithoutThePodSelector(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset(template())
	p := &Provisioner{Kube: kube, Namespace: "haptic", PodSelector: map[string]string{"app": "haproxy"}}
	gw := gatewayWith(map[string]string{"team": "a", "app": "stolen"}, map[string]string{"note": "n"}, 80)
	gw.UID = "gw-uid"
	res, err := p.Ensure(ctx, gw, InfraOf(gw, nil, p.PodSelector))
	if err != nil || res.ServiceErr != nil {
		t.Fatalf("ensure: %v / service: %v", err, res.ServiceErr)
	}
	id := GatewayID(types.NamespacedName{Namespace: "apps", Name: "web"})
	if len(res.Selector) != 1 || res.Selector[GatewayLabel] != id {
		t.Fatalf("selector %v", res.Selector)
	}
	d, err := kube.AppsV1().Deployments("haptic").Get(ctx, "haproxy-gw-"+id, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := d.Spec.Template.Labels
	if _, selected := pod["app"]; selected {
		t.Fatalf("the Gateway's pods carry the podSelector's label: %v", pod)
	}
	if pod["release"] != "r1" || pod[GatewayLabel] != id || pod[componentLabel] != "gateway" || pod["team"] != "a" ||
		pod[gatewayNameLabel] != "web" || d.Spec.Template.Annotations["note"] != "n" ||
		d.Spec.Template.Annotations[GatewayAnnotation] != "apps/web" || d.Spec.Selector.MatchLabels[GatewayLabel] != id {
		t.Fatalf("deployment %+v", d)
	}
	if !res.Infra.Provisioned() {
		t.Fatal("a provisioned Gateway's infra is not marked provisioned")
	}

	// A changed infrastructure updates the pod template; the same one writes nothing.
	gw2 := gatewayWith(map[string]string{"team": "b"}, nil, 80)
	if _, err := p.Ensure(ctx, gw2, InfraOf(gw2, nil, p.PodSelector)); err != nil {
		t.Fatal(err)
	}
	d, _ = kube.AppsV1().Deployments("haptic").Get(ctx, "haproxy-gw-"+id, metav1.GetOptions{})
	if d.Spec.Template.Labels["team"] != "b" {
		t.Fatalf("labels after the change: %v", d.Spec.Template.Labels)
	}
	if _, ok := d.Spec.Template.Annotations["note"]; ok {
		t.Fatalf("a removed infrastructure annotation stayed: %v", d.Spec.Template.Annotations)
	}
	writes := len(kube.Actions())
	if _, err := p.Ensure(ctx, gw2, InfraOf(gw2, nil, p.PodSelector)); err != nil {
		t.Fatal(err)
	}
	for _, a := range kube.Actions()[writes:] {
		if a.GetVerb() != "get" {
			t.Errorf("an unchanged Gateway caused a %s of %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

func TestEnsureWithoutTemplateFails(t *testing.T) {
	p := &Provisioner{Kube: fake.NewSimpleClientset(), Namespace: "haptic", Template: "missing"}
	gw := gatewayWith(nil, nil, 80)
	if _, err := p.Ensure(context.Background(), gw, InfraOf(gw, nil, nil)); err == nil {
		t.Fatal("a Gateway was provisioned without the template Deployment")
	}
}

func TestServiceFailureDoesNotHoldThePodsBack(t *testing.T) {
	foreign := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web-haproxy", Namespace: "apps"}}
	p := &Provisioner{Kube: fake.NewSimpleClientset(template(), foreign), Namespace: "haptic"}
	gw := gatewayWith(nil, nil, 80)
	res, err := p.Ensure(context.Background(), gw, InfraOf(gw, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.ServiceErr == nil || res.Infra.Provisioned() || len(res.Selector) == 0 {
		t.Fatalf("result %+v: want pods, a service error and nothing recorded", res)
	}
}

func TestDeleteStaleKeepsLiveGateways(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset(template())
	p := &Provisioner{Kube: kube, Namespace: "haptic"}
	for _, name := range []string{"a", "b"} {
		gw := gatewayWith(nil, nil, 80)
		gw.Name = name
		if _, err := p.Ensure(ctx, gw, InfraOf(gw, nil, nil)); err != nil {
			t.Fatal(err)
		}
	}
	keep := map[types.NamespacedName]int64{{Namespace: "apps", Name: "a"}: 1}
	if err := p.DeleteStale(ctx, keep); err != nil {
		t.Fatal(err)
	}
	list, _ := kube.AppsV1().Deployments("haptic").List(ctx, metav1.ListOptions{})
	var names []string
	for _, d := range list.Items {
		names = append(names, d.Name)
	}
	want := []string{"haproxy", "haproxy-gw-" + GatewayID(types.NamespacedName{Namespace: "apps", Name: "a"})}
	if len(names) != 2 || names[0] != want[0] || names[1] != want[1] {
		t.Fatalf("deployments %v, want %v", names, want)
	}
}
