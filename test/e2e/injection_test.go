package e2e

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHostileObjectsNeverReachHAProxy: objects that would inject configuration or
// break it are refused by the admission webhook or, when they got in anyway (created
// before the webhook was registered), left out with a Warning Event saying why —
// and in every case another namespace's valid route is served afterwards without a
// reload: one tenant's bad object freezes nobody.
func TestHostileObjectsNeverReachHAProxy(t *testing.T) {
	e := setupWithStart(t, 1, librariesConfig(t, "", "base", "ingress", "gateway"), false)
	ca := e.listenWebhook()
	e.metrics, _ = e.runController(nil)
	ingresses := e.c.Client.NetworkingV1().Ingresses(e.ns)

	var pod string
	e.eventually("a HAProxy pod", 60*time.Second, func() (bool, string) {
		for _, ip := range e.haproxyPods() {
			pod = ip
			return true, ""
		}
		return false, "none ready"
	})
	e.eventually("echo.localhost answers 200", 60*time.Second, func() (bool, string) {
		code, _, err := e.get(pod, "echo.localhost", "/")
		return code == 200, fmt.Sprint(code, err)
	})

	// An allowlist of 100 addresses is more words than HAProxy reads on one line:
	// the library must spread it, and the route is served.
	allow := make([]string, 100)
	for i := range allow {
		allow[i] = fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
	}
	allow = append(allow, "127.0.0.0/8", "10.0.0.0/8")
	big := e.timeoutIngress("allow100", "30s")
	big.Annotations["haproxy-haptic.org/allowlist"] = strings.Join(allow, ",")
	if _, err := ingresses.Create(e.ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("allow100.localhost answers 200", 60*time.Second, func() (bool, string) {
		code, _, err := e.get(pod, "allow100.localhost", "/")
		return code == 200, fmt.Sprint(code, err)
	})

	// Before the webhook: an Ingress whose annotation holds a newline gets in, and is
	// left out (never rendered) with an Event that names the field.
	sneaky := e.timeoutIngress("sneaky", "5s\nfrontend injected\n  bind :9999")
	if _, err := ingresses.Create(e.ctx, sneaky, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("a LeftOut Event on Ingress sneaky", 60*time.Second, func() (bool, string) {
		out, err := e.c.Kubectl(e.ctx, "get", "events", "-n", e.ns, "--field-selector", "involvedObject.name=sneaky,reason=LeftOut",
			"-o", "jsonpath={.items[*].message}")
		msg := string(out)
		return err == nil && strings.Contains(msg, "metadata.annotations.haproxy-haptic.org/timeout-server: holds a newline"), msg
	})
	if n := e.metric("haptic_objects_left_out", `resource="ingresses"`); n < 1 {
		t.Fatalf("haptic_objects_left_out{resource=ingresses} = %v", n)
	}

	e.registerWebhook(ca)
	reloads := e.metric("haptic_haproxy_reloads_total", "")

	// With the webhook: the same Ingress, an HTTPRoute with a newline in a
	// backendRef name and a Gateway whose certificate Secret is not a certificate
	// are refused, or admitted and left out, each with a message naming the field.
	_, err := ingresses.Create(e.ctx, e.timeoutIngress("sneaky2", "5s\nfrontend injected"), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "timeout-server: holds a newline") {
		t.Fatalf("the webhook admitted an annotation with a newline: %v", err)
	}
	route := fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: nl-backend, namespace: %s}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: "echo\nfrontend injected", port: 80}]
`, e.ns)
	out, err := e.c.Kubectl(e.ctx, "apply", "-f", writeTemp(t, route))
	if err == nil || !strings.Contains(string(out), "holds a newline") {
		t.Fatalf("the webhook admitted an HTTPRoute with a newline in a backendRef name: %v\n%s", err, out)
	}
	badCert := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: not-a-cert, namespace: %[1]s}
type: kubernetes.io/tls
data: {tls.crt: %[2]s, tls.key: %[2]s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: %[1]s
  listeners:
  - {name: https, protocol: HTTPS, port: 8443, hostname: "tls.localhost", tls: {mode: Terminate, certificateRefs: [{name: not-a-cert}]}}
`, e.ns, "bm90IGEgY2VydGlmaWNhdGU=")
	if out, err := e.c.Kubectl(e.ctx, "apply", "-f", writeTemp(t, badCert)); err != nil {
		// Refused at admission is as good as left out, if it says why.
		if !strings.Contains(string(out), "not-a-cert") {
			t.Fatalf("the Gateway was refused without naming the certificate: %v\n%s", err, out)
		}
	}

	// Another tenant's valid route is served, without a reload.
	other := e.c.NewNamespace(t).Name
	echo, err := os.ReadFile("../../deploy/local/40-echo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("namespace: default", "namespace: "+other, "ingressClassName: haptic", "ingressClassName: "+e.ns,
		"echo.localhost", "tenant.localhost").Replace(string(echo))
	if out, err := e.c.Kubectl(e.ctx, "apply", "-f", writeTemp(t, text)); err != nil {
		t.Fatalf("apply the other tenant's app: %v\n%s", err, out)
	}
	e.eventually("tenant.localhost answers 200", 90*time.Second, func() (bool, string) {
		code, _, err := e.get(pod, "tenant.localhost", "/")
		return code == 200, fmt.Sprint(code, err)
	})
	if after := e.metric("haptic_haproxy_reloads_total", ""); after != reloads {
		t.Errorf("haptic_haproxy_reloads_total went from %v to %v: a new route and refused objects must not reload", reloads, after)
	}
	if code, _, err := e.get(pod, "echo.localhost", "/"); code != 200 {
		t.Fatalf("echo.localhost stopped answering: %d %v", code, err)
	}
	// Nothing injected answers: the pod serves only its configured ports.
	if resp, err := e.http.Get("http://" + net.JoinHostPort(pod, "9999") + "/"); err == nil {
		resp.Body.Close()
		t.Fatalf("an injected frontend answered on :9999 (%d)", resp.StatusCode)
	}
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}
