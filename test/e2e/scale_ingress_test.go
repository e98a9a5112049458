package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestScaleIngress: with the default libraries (base and ingress), N of the mix —
// an Ingress, its Service and two EndpointSlices — all reach the pod's host.map
// within budget; the controller's heap stays within budget; and bin/haptic run,
// started afresh as a process of its own, deploys them within budget (10 s at 5,000:
// the render-speed target) and with a resident set within budget (200 MiB at
// 5,000). The EndpointSlices' endpoints are not ready: 2N servers would have HAProxy
// health-check addresses that are not there, on this machine's two cores. N is 200
// in make test; make test-scale runs 5,000.
func TestScaleIngress(t *testing.T) {
	size := scaleSizeFromEnv(t)
	e := setupLibraries(t, 1, "", "base", "ingress")
	var pod string
	e.eventually("a ready HAProxy pod", 90*time.Second, func() (bool, string) {
		for name := range e.haproxyPods() {
			pod = name
		}
		return pod != "", ""
	})
	cfg := rest.CopyConfig(e.c.REST)
	cfg.QPS, cfg.Burst = 500, 1000
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	createAll(t, size.routes, func(i int) error { return createScaleIngress(e, kube, i) })
	t.Logf("%d Ingresses, Services and EndpointSlice pairs created in %.1f s", size.routes, time.Since(start).Seconds())
	e.eventually(fmt.Sprintf("all %d Ingresses in the pod's host.map", size.routes), size.convergence+2*time.Minute, func() (bool, string) {
		n := strings.Count(e.podExec(pod, "cat", "/etc/haproxy/maps/host.map"), ".scale.localhost ")
		return n >= size.routes, fmt.Sprintf("%d of %d", n, size.routes)
	})
	convergence := time.Since(start)

	heap, rss := memoryNow(t)
	process := e.coldStart("pod=" + pod + " ")
	checkBudgets(t, fmt.Sprintf("TestScaleIngress at %d Ingresses, each with its own Service (default libraries)", size.routes), append([]budgetRow{
		{"full convergence (create → all in the pod's host.map)", convergence.Seconds(), size.convergence.Seconds(), "s"},
		{"controller heap in use after GC", heap, size.controllerMiB, "MiB"},
		{"test process RSS (the controller and the test's clients)", rss, size.controllerMiB + 64, "MiB"},
		{"cold start: bin/haptic run → Ingresses deployed", process.took.Seconds(), size.coldStart.Seconds(), "s"},
	}, process.rows(size.processMiB)...))
}

// createScaleIngress creates Ingress i (host scale-i.scale.localhost, Prefix /), its
// Service (port http 80, no selector) and the Service's two EndpointSlices, whose
// endpoints are not ready.
func createScaleIngress(e *env, kube kubernetes.Interface, i int) error {
	name := fmt.Sprintf("scale-%d", i)
	if _, err := kube.CoreV1().Services(e.ns).Create(e.ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("service %s: %w", name, err)
	}
	for s := range 2 {
		port, ready, portName := int32(8080), false, "http"
		if _, err := kube.DiscoveryV1().EndpointSlices(e.ns).Create(e.ctx, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, s),
				Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{fmt.Sprintf("10.%d.%d.%d", 1+s, i/256%256, i%256)},
				Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
			Ports: []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
		}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("endpointslice %s-%d: %w", name, s, err)
		}
	}
	prefix, class := networkingv1.PathTypePrefix, e.ns
	_, err := kube.NetworkingV1().Ingresses(e.ns).Create(e.ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
			Host: name + ".scale.localhost",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: name, Port: networkingv1.ServiceBackendPort{Name: "http"}}},
			}}}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("ingress %s: %w", name, err)
	}
	return nil
}
