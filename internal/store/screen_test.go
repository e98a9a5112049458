package store

import (
	"strings"
	"testing"
)

func TestScreenRefusesControlCharacters(t *testing.T) {
	obj := func(host string, annotations map[string]any) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "x", "namespace": "n", "annotations": annotations,
				"managedFields": []any{map[string]any{"f": "a\nb"}}},
			"spec": map[string]any{"rules": []any{map[string]any{"host": host}}},
		}
	}
	benign := obj("example.com", map[string]any{
		"kubectl.kubernetes.io/last-applied-configuration":  "{}\n",
		"nginx.ingress.kubernetes.io/configuration-snippet": "a;\nb;",
		"haproxy-haptic.org/config-backend":                 "http-request deny\nhttp-request allow",
	})
	if got := screen("ingresses", benign); got != "" {
		t.Fatalf("benign object refused: %s", got)
	}
	if anyControl("ingresses", "", benign) { // (the quick check that spares most objects the walk)
		t.Error("the quick check finds a problem in exempt fields")
	}
	for value, want := range map[string]string{
		"a\nfrontend x": "spec.rules[0].host: holds a newline",
		"a\x00b":        "spec.rules[0].host: holds a NUL byte",
		"a\tb":          "spec.rules[0].host: holds a tab",
		"a\x1bb":        "spec.rules[0].host: holds the control character 0x1b",
	} {
		if got := screen("ingresses", obj(value, nil)); got != want {
			t.Errorf("%q: got %q, want %q", value, got, want)
		}
		if !anyControl("ingresses", "", obj(value, nil)) {
			t.Errorf("%q: the quick check finds nothing", value)
		}
	}
	got := screen("ingresses", obj("ok", map[string]any{"haproxy-haptic.org/timeout-server": "5s\nbackend x"}))
	if !strings.HasPrefix(got, "metadata.annotations.haproxy-haptic.org/timeout-server: ") {
		t.Errorf("our annotation with a newline: %q", got)
	}
	secret := map[string]any{"metadata": map[string]any{"name": "s"}, "data": map[string]any{"tls.crt": "-----BEGIN\nx"}}
	if got := screen("secrets", secret); got != "" {
		t.Errorf("secret data refused: %s", got)
	}
	if got := screen("ingresses", secret); got == "" {
		t.Errorf("data of a non-Secret kind with a newline was accepted")
	}
}
