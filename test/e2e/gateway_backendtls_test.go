package e2e

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestGatewayBackendTLSPolicy: HAProxy speaks TLS to a backend a BackendTLSPolicy
// targets and verifies its certificate. With the CA that issued the backend's
// certificate the route answers 200 and the backend saw the policy's hostname as
// SNI; with another CA HAProxy refuses the backend (503); with a CA reference that
// does not resolve the backend answers 500 and the policy's status says why. A
// second endpoint of the TLS backend joins without a reload.
func TestGatewayBackendTLSPolicy(t *testing.T) {
	g := setupGateways(t, "")
	ca, rogue := newTestCA(t, "haptic backend CA"), newTestCA(t, "rogue CA")
	crt, key := ca.issue(t, "backend.internal", x509.ExtKeyUsageServerAuth)
	core := g.c.Client.CoreV1()
	if _, err := core.Secrets(g.ns).Create(g.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "backend-tls"},
		Type: corev1.SecretTypeTLS, StringData: map[string]string{"tls.crt": crt, "tls.key": key}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, pem := range map[string]string{"backend-ca": ca.pem, "rogue-ca": rogue.pem} {
		if _, err := core.ConfigMaps(g.ns).Create(g.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
			Data: map[string]string{"ca.crt": pem}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// echo-basic serves HTTPS on 8443 with TLS_SERVER_CERT/TLS_SERVER_PRIVKEY (the
	// conformance suite's tls-backend); three Services select it, one per policy.
	g.applyText(`apiVersion: apps/v1
kind: Deployment
metadata: {name: tls-web}
spec:
  replicas: 1
  selector: {matchLabels: {app: tls-web}}
  template:
    metadata: {labels: {app: tls-web}}
    spec:
      containers:
      - name: echo
        image: echo-basic
        env:
        - {name: TLS_SERVER_CERT, value: /etc/secret-volume/crt}
        - {name: TLS_SERVER_PRIVKEY, value: /etc/secret-volume/key}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        volumeMounts: [{name: tls, mountPath: /etc/secret-volume}]
      volumes:
      - name: tls
        secret:
          secretName: backend-tls
          items: [{key: tls.crt, path: crt}, {key: tls.key, path: key}]
---
apiVersion: v1
kind: Service
metadata: {name: tls-good}
spec:
  selector: {app: tls-web}
  ports: [{name: https, port: 443, targetPort: 8443}]
---
apiVersion: v1
kind: Service
metadata: {name: tls-rogue}
spec:
  selector: {app: tls-web}
  ports: [{name: https, port: 443, targetPort: 8443}]
---
apiVersion: v1
kind: Service
metadata: {name: tls-missing}
spec:
  selector: {app: tls-web}
  ports: [{name: https, port: 443, targetPort: 8443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: good}
spec:
  targetRefs: [{group: "", kind: Service, name: tls-good, sectionName: https}]
  validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: backend-ca}], hostname: backend.internal}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: rogue}
spec:
  targetRefs: [{group: "", kind: Service, name: tls-rogue}]
  validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: rogue-ca}], hostname: backend.internal}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: missing}
spec:
  targetRefs: [{group: "", kind: Service, name: tls-missing}]
  validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: nope}], hostname: backend.internal}
`)
	if err := g.createGateway("edge"); err != nil {
		t.Fatal(err)
	}
	for _, svc := range []string{"tls-good", "tls-rogue", "tls-missing"} {
		rt := httpRoute(svc, "edge", svc+".example.com", "/")
		port := gwv1.PortNumber(443)
		rt.Spec.Rules[0].BackendRefs[0].Name, rt.Spec.Rules[0].BackendRefs[0].Port = gwv1.ObjectName(svc), &port
		if _, err := g.gw.GatewayV1().HTTPRoutes(g.ns).Create(g.ctx, rt, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	addr, err := g.gatewayAddress("edge", 180*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	get := func(host string) (int, string) {
		req, err := http.NewRequestWithContext(g.ctx, http.MethodGet, "http://"+net.JoinHostPort(addr, "80")+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := g.http.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	g.eventually("the backend with the right CA serves, with the policy's hostname as SNI", 120*time.Second, func() (bool, string) {
		code, body := get("tls-good.example.com")
		var echo struct {
			TLS *struct {
				ServerName string `json:"serverName"`
			} `json:"tls"`
		}
		_ = json.Unmarshal([]byte(body), &echo)
		return code == 200 && echo.TLS != nil && echo.TLS.ServerName == "backend.internal", fmt.Sprintf("code %d body %.300s", code, body)
	})
	g.eventually("the backend whose certificate the policy's CA did not issue is refused (503)", 60*time.Second, func() (bool, string) {
		code, body := get("tls-rogue.example.com")
		return code == 503, fmt.Sprintf("code %d body %.200s", code, body)
	})
	g.eventually("the backend whose policy's CA reference does not resolve answers 500", 60*time.Second, func() (bool, string) {
		code, body := get("tls-missing.example.com")
		return code == 500, fmt.Sprintf("code %d body %.200s", code, body)
	})

	conds := func(name string) map[string]metav1.Condition {
		p, err := g.gw.GatewayV1().BackendTLSPolicies(g.ns).Get(g.ctx, name, metav1.GetOptions{})
		out := map[string]metav1.Condition{}
		if err != nil {
			return out
		}
		for _, a := range p.Status.Ancestors {
			if string(a.ControllerName) == g.controllerName && a.AncestorRef.Name == "edge" {
				for _, c := range a.Conditions {
					if c.ObservedGeneration == p.Generation {
						out[c.Type] = c
					}
				}
			}
		}
		return out
	}
	g.eventually("the policies' status on Gateway edge", 60*time.Second, func() (bool, string) {
		good, missing := conds("good"), conds("missing")
		ok := good["Accepted"].Status == metav1.ConditionTrue && good["ResolvedRefs"].Status == metav1.ConditionTrue &&
			missing["Accepted"].Reason == "NoValidCACertificate" && missing["ResolvedRefs"].Reason == "InvalidCACertificateRef"
		return ok, fmt.Sprintf("good %+v missing %+v", good, missing)
	})
	if m := conds("missing")["ResolvedRefs"].Message; m == "" {
		t.Error("the missing CA reference's ResolvedRefs condition has no message")
	} else {
		t.Logf("missing: ResolvedRefs says %q", m)
	}

	// A new endpoint of a TLS backend is a runtime change: add server takes its
	// TLS options, and the CA file is in HAProxy's store already.
	g.settle(addr)
	before := g.reloadCounts(addr)
	g.kubectl("scale", "deployment/tls-web", "--replicas=2")
	g.eventually("both TLS endpoints serve", 120*time.Second, func() (bool, string) {
		seen := map[string]bool{}
		for range 12 {
			if code, body := get("tls-good.example.com"); code == 200 {
				seen[echoPod(body)] = true
			}
		}
		return len(seen) == 2, fmt.Sprint(seen)
	})
	g.requireNoReload(addr, before, "a second endpoint of a TLS backend")
}
