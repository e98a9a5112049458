package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/haproxy-haptic/haptic/internal/webhook"
)

// TestAdmissionWebhook: with the admission webhook registered, the API server asks
// the controller about every Ingress of the test's namespace. An Ingress the
// ingress library rejects (an invalid annotation value) is refused at create and
// at update time with a message naming the object and the annotation; valid ones
// are admitted and routed; a refused update leaves the running route alone.
func TestAdmissionWebhook(t *testing.T) {
	e := setupWithStart(t, 1, librariesConfig(t, "", "base", "ingress"), false)
	ca := e.listenWebhook()
	e.metrics, _ = e.runController(nil)
	e.registerWebhook(ca)

	ingresses := e.c.Client.NetworkingV1().Ingresses(e.ns)
	ingress := e.timeoutIngress

	// The first admission waits for the controller's stores: until then it admits
	// with a warning, which this create (valid) does not care about.
	var pod string
	e.eventually("a HAProxy pod", 60*time.Second, func() (bool, string) {
		for _, ip := range e.haproxyPods() {
			pod = ip
			return true, ""
		}
		return false, "none ready"
	})
	if _, err := ingresses.Create(e.ctx, ingress("good", "30s"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a valid Ingress was refused: %v", err)
	}
	e.eventually("good.localhost answers 200", 60*time.Second, func() (bool, string) {
		code, _, err := e.get(pod, "good.localhost", "/")
		return code == 200, fmt.Sprint(code, err)
	})

	_, err := ingresses.Create(e.ctx, ingress("bad", "5 parsecs"), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "denied the request") ||
		!strings.Contains(err.Error(), "Ingress "+e.ns+"/bad") ||
		!strings.Contains(err.Error(), "annotation haproxy-haptic.org/timeout-server") {
		t.Fatalf("an invalid annotation was not refused with a message naming the object and field: %v", err)
	}
	if _, err := ingresses.Get(e.ctx, "bad", metav1.GetOptions{}); err == nil {
		t.Fatal("the refused Ingress exists")
	}

	// The controller writes the Ingress's status meanwhile: an update from a stale
	// read conflicts before admission sees it, so it is read again.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		good, err := ingresses.Get(e.ctx, "good", metav1.GetOptions{})
		if err != nil {
			return err
		}
		good.Annotations["haproxy-haptic.org/timeout-server"] = "soon"
		_, err = ingresses.Update(e.ctx, good, metav1.UpdateOptions{})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "timeout-server") {
		t.Fatalf("an invalid update was not refused: %v", err)
	}
	if code, _, err := e.get(pod, "good.localhost", "/"); code != 200 {
		t.Fatalf("the route stopped after a refused update: %d %v", code, err)
	}

	// Admission latency for valid creates (each one a full render of the proposed
	// configuration).
	var took []time.Duration
	for i := range 20 {
		start := time.Now()
		if _, err := ingresses.Create(e.ctx, ingress(fmt.Sprintf("lat-%d", i), "1m"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create lat-%d: %v", i, err)
		}
		took = append(took, time.Since(start))
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	t.Logf("20 admitted creates (API round trip incl. the webhook): median %s, max %s",
		took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))

	// An admitted change is planned while it is admitted: the delivery of the
	// stored change finds its plan made. Each create waits for the one before to
	// be served, so the pod is idle when the next one is admitted.
	e.settle(pod)
	aheadBefore := e.metric("haptic_deploy_planned_ahead_total", "")
	for i := range 5 {
		name := fmt.Sprintf("ahead-%d", i)
		if _, err := ingresses.Create(e.ctx, ingress(name, "1m"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		e.eventually(name+".localhost answers 200", 30*time.Second, func() (bool, string) {
			code, _, err := e.get(pod, name+".localhost", "/")
			return code == 200, fmt.Sprint(code, err)
		})
	}
	if ahead := e.metric("haptic_deploy_planned_ahead_total", "") - aheadBefore; ahead != 5 {
		t.Errorf("%v of 5 admitted creates were delivered with a plan made at admission, want 5", ahead)
	}

	if denied := e.metric("haptic_webhook_requests_total", `result="denied"`); denied != 2 {
		t.Errorf("haptic_webhook_requests_total{result=denied} = %v, want 2", denied)
	}
	if allowed := e.metric("haptic_webhook_requests_total", `resource="ingresses.networking.k8s.io",result="allowed"`); allowed < 26 {
		t.Errorf("haptic_webhook_requests_total{result=allowed} = %v, want at least 26", allowed)
	}
}

// listenWebhook opens the controller's webhook listener inside the cluster's network
// namespace (the API server calls it there, on 127.0.0.1) with a fresh certificate,
// for runController to serve; it returns the CA.
func (e *env) listenWebhook() []byte {
	e.t.Helper()
	cert, err := webhook.NewCertificate([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	dir := e.t.TempDir()
	for name, data := range map[string][]byte{"tls.crt": cert.Cert, "tls.key": cert.Key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			e.t.Fatal(err)
		}
	}
	if e.webhook, err = e.c.Listen("127.0.0.1:0"); err != nil {
		e.t.Fatal(err)
	}
	e.webhookCertDir = dir
	return cert.CA
}

// registerWebhook makes the API server ask the controller about every create and
// update of an Ingress, Gateway or route in the test's namespace (failurePolicy Fail); the returned
// function unregisters it (cleanup does too).
func (e *env) registerWebhook(ca []byte) func() {
	e.t.Helper()
	url := "https://" + e.webhook.Addr().String() + "/validate"
	fail, none, timeout := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone, int32(10)
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "haptic-" + e.ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "ingresses.haproxy-haptic.org",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"ingresses"}},
			}, {
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"gateway.networking.k8s.io"}, APIVersions: []string{"v1"},
					Resources: []string{"gateways", "httproutes", "grpcroutes"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": e.ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	hooks := e.c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := hooks.Create(e.ctx, cfg, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	var once sync.Once
	remove := func() { once.Do(func() { _ = hooks.Delete(context.Background(), cfg.Name, metav1.DeleteOptions{}) }) }
	e.t.Cleanup(remove)
	return remove
}

// timeoutIngress routes <name>.localhost to echo with a timeout-server annotation.
func (e *env) timeoutIngress(name, timeoutServer string) *networkingv1.Ingress {
	class, prefix := e.ns, networkingv1.PathTypePrefix
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"haproxy-haptic.org/timeout-server": timeoutServer}},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
			Host: name + ".localhost",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "echo", Port: networkingv1.ServiceBackendPort{Name: "http"}}},
			}}}},
		}}},
	}
}

// BenchmarkAdmission measures the API round trip of an Ingress create that the
// webhook admits (one render of the whole configuration with the proposed object),
// one at a time and 8 at once, with 1,000 and 5,000 Ingresses in the stores:
//
//	make bench-webhook   (go test -run '^$' -bench Admission -benchtime 1x ./test/e2e/)
func BenchmarkAdmission(b *testing.B) {
	e := setupWithStart(b, 1, librariesConfig(b, "", "base", "ingress"), false)
	ca := e.listenWebhook()
	e.metrics, _ = e.runController(nil)
	ingresses := e.c.Client.NetworkingV1().Ingresses(e.ns)
	have := 0
	for _, n := range []int{1000, 5000} {
		// Bulk creates bypass the webhook; it is registered for the samples only.
		e.createIngressRange(have, n)
		have = n
		e.eventually(fmt.Sprintf("%d Ingresses in the controller's stores", n), 5*time.Minute, func() (bool, string) {
			got, err := e.tryMetric("haptic_watched_objects", `resource="ingresses"`)
			return err == nil && int(got) >= n, fmt.Sprint(got, err)
		})
		unregister := e.registerWebhook(ca)
		b.Run(fmt.Sprintf("ingresses=%d", n), func(b *testing.B) {
			for range b.N {
				var serial, parallel []time.Duration
				for i := range 20 {
					start := time.Now()
					if _, err := ingresses.Create(e.ctx, e.timeoutIngress(fmt.Sprintf("adm-%d-%d", n, i), "1m"), metav1.CreateOptions{}); err != nil {
						b.Fatal(err)
					}
					serial = append(serial, time.Since(start))
				}
				var mu sync.Mutex
				var wg sync.WaitGroup
				for i := range 8 {
					wg.Go(func() {
						start := time.Now()
						_, err := ingresses.Create(e.ctx, e.timeoutIngress(fmt.Sprintf("adm-par-%d-%d", n, i), "1m"), metav1.CreateOptions{})
						mu.Lock()
						defer mu.Unlock()
						if err != nil {
							b.Error(err)
						}
						parallel = append(parallel, time.Since(start))
					})
				}
				wg.Wait()
				sort.Slice(serial, func(i, j int) bool { return serial[i] < serial[j] })
				sort.Slice(parallel, func(i, j int) bool { return parallel[i] < parallel[j] })
				b.ReportMetric(float64(serial[len(serial)/2].Milliseconds()), "p50-ms")
				b.Logf("%d Ingresses: admitted create, one at a time (20): median %s max %s; 8 at once: median %s max %s",
					n, serial[len(serial)/2].Round(time.Millisecond), serial[len(serial)-1].Round(time.Millisecond),
					parallel[len(parallel)/2].Round(time.Millisecond), parallel[len(parallel)-1].Round(time.Millisecond))
			}
		})
		unregister()
	}
}
