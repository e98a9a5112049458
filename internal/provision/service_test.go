package provision

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestGatewayService(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset()
	p := &Provisioner{Kube: kube, Namespace: "haptic"}
	gw := gatewayWith(map[string]string{"team": "a"}, map[string]string{"note": "n"}, 80, 443)
	gw.UID = "gw-uid"
	infra := InfraOf(gw, nil, nil)
	if err := p.EnsureService(ctx, gw, infra); err != nil {
		t.Fatal(err)
	}
	if err := p.SyncEndpoints(ctx, gatewayKey("apps", "web"), infra, []string{"10.244.0.7", "fd00::1"}); err != nil {
		t.Fatal(err)
	}
	svc, err := kube.CoreV1().Services("apps").Get(ctx, "web-haproxy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Labels[gatewayNameLabel] != "web" || svc.Labels["team"] != "a" || svc.Annotations["note"] != "n" ||
		len(svc.Spec.Ports) != 2 || svc.Spec.Selector != nil || metav1.GetControllerOf(svc).UID != "gw-uid" {
		t.Fatalf("service %+v", svc)
	}
	eps, err := kube.DiscoveryV1().EndpointSlices("apps").Get(ctx, "web-haproxy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(eps.Endpoints) != 1 || eps.Endpoints[0].Addresses[0] != "10.244.0.7" || len(eps.Ports) != 2 ||
		eps.Labels["kubernetes.io/service-name"] != "web-haproxy" {
		t.Fatalf("endpointslice %+v", eps)
	}

	// A Service of that name that is not the Gateway's is left alone.
	other := fake.NewSimpleClientset(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web-haproxy", Namespace: "apps"}})
	p = &Provisioner{Kube: other, Namespace: "haptic"}
	if err := p.EnsureService(ctx, gw, infra); err == nil {
		t.Fatal("a foreign Service was taken over")
	}
	if err := p.SyncEndpoints(ctx, gatewayKey("apps", "web"), infra, []string{"10.244.0.7"}); err == nil {
		t.Fatal("endpoints were written for a foreign Service")
	}
	if list, _ := other.DiscoveryV1().EndpointSlices("apps").List(ctx, metav1.ListOptions{}); len(list.Items) != 0 {
		t.Fatalf("endpointslices %v", list.Items)
	}
}
