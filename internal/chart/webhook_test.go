package chart

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestWebhook checks the admission webhook: a CA-signed serving certificate for
// the webhook Service's DNS name, one webhook per enabled library, the Service
// selecting every replica, the controller serving it, and the certificate
// kept on upgrades.
func TestWebhook(t *testing.T) {
	t.Parallel()
	r := renderChart(t, nil, nil)
	secret := r.named(t, "Secret", "haptic-controller-webhook-tls")
	b64 := func(k string) []byte {
		v, _ := field(secret, "data", k).(string)
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatalf("data.%s: %v", k, err)
		}
		return b
	}
	vwc := r.one(t, "ValidatingWebhookConfiguration")
	hooks, _ := vwc["webhooks"].([]any)
	var names []string
	for _, h := range hooks {
		names = append(names, field(h, "name").(string))
		if field(h, "clientConfig", "service", "name") != "haptic-controller-webhook" || field(h, "clientConfig", "service", "path") != "/validate" ||
			field(h, "failurePolicy") != "Fail" || field(h, "sideEffects") != "None" {
			t.Errorf("webhook %v: %v", field(h, "name"), h)
		}
		ca, err := base64.StdEncoding.DecodeString(field(h, "clientConfig", "caBundle").(string))
		if err != nil || string(ca) != string(b64("ca.crt")) {
			t.Errorf("webhook %v: caBundle is not the Secret's CA (%v)", field(h, "name"), err)
		}
	}
	if want := []string{"ingresses.haproxy-haptic.org", "routes.gateway.haproxy-haptic.org"}; !slices.Equal(names, want) {
		t.Errorf("webhooks %v, want %v", names, want)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b64("ca.crt")) {
		t.Fatal("ca.crt is no PEM certificate")
	}
	block, _ := pem.Decode(b64("tls.crt"))
	if block == nil {
		t.Fatal("tls.crt is no PEM certificate")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	dns := fmt.Sprintf("haptic-controller-webhook.%s.svc", releaseNamespace)
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: dns, Roots: pool}); err != nil {
		t.Errorf("the serving certificate does not verify for %s: %v", dns, err)
	}
	svc := r.named(t, "Service", "haptic-controller-webhook")
	if sel := field(svc, "spec", "selector"); field(sel, "app.kubernetes.io/component") != "controller" || field(sel, "haproxy-haptic.org/leader") != nil {
		t.Errorf("the webhook Service must select every controller replica: %v", sel)
	}
	ctl := r.named(t, "Deployment", "haptic-controller")
	args := fmt.Sprint(field(ctl, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["args"])
	if !strings.Contains(args, "--webhook-addr=$(POD_IP):9443") || !strings.Contains(args, "--webhook-cert-dir=/etc/haptic/webhook") {
		t.Errorf("controller args %s", args)
	}
	volumes := fmt.Sprint(field(ctl, "spec", "template", "spec", "volumes"))
	if !strings.Contains(volumes, "haptic-controller-webhook-tls") {
		t.Errorf("controller volumes %s", volumes)
	}
	if !covers(rulesOf(t, r.one(t, "Role")), "", "pods", "patch") {
		t.Error("the Role does not let the leader label its pod")
	}

	t.Run("no gateway library", func(t *testing.T) {
		hooks, _ := renderChart(t, valueSets["no gateway"], nil).one(t, "ValidatingWebhookConfiguration")["webhooks"].([]any)
		if len(hooks) != 1 || field(hooks[0], "name") != "ingresses.haproxy-haptic.org" {
			t.Errorf("webhooks %v", hooks)
		}
	})
	t.Run("upgrade keeps the certificate", func(t *testing.T) {
		lookup := func(apiVersion, kind, ns, name string) (map[string]any, error) {
			if kind == "Secret" && name == "haptic-controller-webhook-tls" {
				return map[string]any{"data": map[string]any{"ca.crt": "Y2E=", "tls.crt": "Y3J0", "tls.key": "a2V5"}}, nil
			}
			return map[string]any{}, nil
		}
		r := renderChart(t, nil, lookup)
		if field(r.named(t, "Secret", "haptic-controller-webhook-tls"), "data", "tls.key") != "a2V5" ||
			field(r.one(t, "ValidatingWebhookConfiguration")["webhooks"].([]any)[0], "clientConfig", "caBundle") != "Y2E=" {
			t.Error("an upgrade replaced the live certificate")
		}
	})
	t.Run("disabled", func(t *testing.T) {
		r := renderChart(t, map[string]any{"controller": map[string]any{"webhook": map[string]any{"enabled": false}}}, nil)
		if n := len(r.find(t, "ValidatingWebhookConfiguration")); n != 0 {
			t.Errorf("%d webhook configurations with the webhook disabled", n)
		}
		ctl := r.named(t, "Deployment", "haptic-controller")
		if args := fmt.Sprint(field(ctl, "spec", "template", "spec", "containers")); strings.Contains(args, "webhook") {
			t.Errorf("the controller still serves the webhook: %s", args)
		}
	})
}
