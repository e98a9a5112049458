package provision

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A Gateway whose pods HAPTIC provisions also gets a Service in its own namespace:
// the name its users find next to the Gateway (kubectl get svc -l
// gateway.networking.k8s.io/gateway-name=NAME), carrying the Gateway's
// infrastructure labels and annotations, with the Gateway's pods (which live in the
// controller's namespace) as endpoints. It is owned by the Gateway and goes away
// with it.

// endpointSliceManager marks the EndpointSlices HAPTIC keeps.
const endpointSliceManager = "controller.haproxy-haptic.org"

// gatewayServiceName is <gateway>-haproxy when that is a valid Service name, else
// haptic-gw-<id>.
func gatewayServiceName(gw types.NamespacedName) string {
	if name := gw.Name + "-haproxy"; len(validation.IsDNS1035Label(name)) == 0 {
		return name
	}
	return "haptic-gw-" + GatewayID(gw)
}

// portName names a listener port in the Service and its EndpointSlice alike.
func portName(p int32) string { return fmt.Sprintf("port-%d", p) }

func (g Infra) servicePorts() []corev1.ServicePort {
	out := make([]corev1.ServicePort, 0, len(g.ports))
	for _, p := range g.ports {
		out = append(out, corev1.ServicePort{Name: portName(p), Port: p, Protocol: corev1.ProtocolTCP})
	}
	return out
}

// ownService reports whether svc is the Service HAPTIC made for Gateway gw (it is
// controlled by it): another one of the same name is never touched.
func ownService(svc *corev1.Service, gw string) error {
	if owner := metav1.GetControllerOf(svc); owner == nil || owner.Kind != "Gateway" || owner.Name != gw {
		return fmt.Errorf("service %s/%s exists and is not gateway %s's", svc.Namespace, svc.Name, gw)
	}
	return nil
}

// EnsureService creates or updates the Gateway's Service.
func (p *Provisioner) EnsureService(ctx context.Context, gw *gwv1.Gateway, infra Infra) error {
	nn := types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}
	services := p.Kube.CoreV1().Services(gw.Namespace)
	name := gatewayServiceName(nn)
	labels := maps.Clone(infra.labels)
	labels[gatewayNameLabel] = gw.Name
	labels["app.kubernetes.io/managed-by"] = "haptic"
	cur, err := services.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		yes := true
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: gw.Namespace, Labels: labels,
				Annotations: maps.Clone(infra.annotations),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: gwv1.GroupVersion.String(), Kind: "Gateway",
					Name: gw.Name, UID: gw.UID, Controller: &yes}}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: infra.servicePorts()},
		}
		if _, err := services.Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create service %s/%s for gateway %s: %w", gw.Namespace, name, nn, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get service %s/%s: %w", gw.Namespace, name, err)
	}
	if err := ownService(cur, gw.Name); err != nil {
		return err
	}
	if maps.Equal(cur.Labels, labels) && maps.Equal(cur.Annotations, infra.annotations) &&
		slices.EqualFunc(cur.Spec.Ports, infra.servicePorts(), samePort) {
		return nil
	}
	cur.Labels, cur.Annotations, cur.Spec.Ports = labels, maps.Clone(infra.annotations), infra.servicePorts()
	if _, err := services.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update service %s/%s: %w", gw.Namespace, name, err)
	}
	return nil
}

func samePort(a, b corev1.ServicePort) bool {
	return a.Name == b.Name && a.Port == b.Port && a.Protocol == b.Protocol
}

// SyncEndpoints makes the EndpointSlice of a Gateway's Service list ips.
func (p *Provisioner) SyncEndpoints(ctx context.Context, gw types.NamespacedName, infra Infra, ips []string) error {
	svcName := gatewayServiceName(gw)
	svc, err := p.Kube.CoreV1().Services(gw.Namespace).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get service %s/%s: %w", gw.Namespace, svcName, err)
	}
	if err := ownService(svc, gw.Name); err != nil {
		return err
	}
	want := discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4}
	for _, ip := range ips {
		if p := net.ParseIP(ip); p != nil && p.To4() != nil {
			ready := true
			want.Endpoints = append(want.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip},
				Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
		}
	}
	tcp := corev1.ProtocolTCP
	for _, p := range infra.ports {
		name, port := portName(p), p
		want.Ports = append(want.Ports, discoveryv1.EndpointPort{Name: &name, Port: &port, Protocol: &tcp})
	}
	eps := p.Kube.DiscoveryV1().EndpointSlices(gw.Namespace)
	cur, err := eps.Get(ctx, svcName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		yes := true
		want.ObjectMeta = metav1.ObjectMeta{Name: svcName, Namespace: gw.Namespace,
			Labels:          map[string]string{discoveryv1.LabelServiceName: svcName, discoveryv1.LabelManagedBy: endpointSliceManager},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svcName, UID: svc.UID, Controller: &yes}}}
		if _, err := eps.Create(ctx, &want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create endpointslice %s/%s: %w", gw.Namespace, svcName, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get endpointslice %s/%s: %w", gw.Namespace, svcName, err)
	}
	if equality.Semantic.DeepEqual(cur.Endpoints, want.Endpoints) && equality.Semantic.DeepEqual(cur.Ports, want.Ports) {
		return nil
	}
	cur.Endpoints, cur.Ports = want.Endpoints, want.Ports
	if _, err := eps.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update endpointslice %s/%s: %w", gw.Namespace, svcName, err)
	}
	return nil
}
