package libraries

import (
	"context"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/pipeline"
)

// The ingress library makes its runs of Ingresses on every core; these hold it to
// what making them one by one gives, across runs.

// TestIngressFirstBadIngressFails: the render fails with the first failing Ingress
// in the stores' order (namespace/name), however many runs come after it.
func TestIngressFirstBadIngressFails(t *testing.T) {
	raw := ingresses(300)
	bad := func(ns string) map[string]any {
		ing := ingresses(1)["ingresses"][0]
		ing["metadata"] = map[string]any{"namespace": ns, "name": "bad"}
		ing["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["host"] = "not a host"
		return ing
	}
	raw["ingresses"] = append(raw["ingresses"], bad("zz-last"), bad("a-first"))
	assertRenderFails(t, raw, "Ingress a-first/bad: spec.rules[0].host")
}

// assertRenderFails renders raw a few times (its runs are made on every core, in any
// order) and wants each render to fail with an error that holds want.
func assertRenderFails(t *testing.T, raw map[string][]map[string]any, want string) {
	t.Helper()
	p := load(t)
	snap, err := p.Builder.Snapshot(raw)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		_, err = p.Render(context.Background(), &pipeline.Fixture{Snapshot: snap, ExtraContext: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("want an error with %q, got %v", want, err)
		}
	}
}

// TestIngressFirstDefaultBackendWins: of two Ingresses with a spec.defaultBackend in
// different runs, the first in the stores' order takes it; the other's is not even
// a backend.
func TestIngressFirstDefaultBackendWins(t *testing.T) {
	raw := ingresses(300)
	withDefault := func(i int, service string) {
		raw["ingresses"][i]["spec"].(map[string]any)["defaultBackend"] = map[string]any{
			"service": map[string]any{"name": service, "port": map[string]any{"number": 80}}}
	}
	// ns0/app-290 sorts before ns9/app-9; 300 Ingresses are several runs
	withDefault(9, "other-9")
	withDefault(290, "other-290")
	for range 3 {
		res := renderFixture(t, load(t), raw)
		var prefix, cfg string
		for _, f := range res.Bundle.Files {
			switch f.Target() {
			case "map:path-prefix.map":
				prefix = f.Content.String()
			case "haproxy.cfg":
				cfg = f.Content.String()
			}
		}
		if !strings.Contains(prefix, "*/ ing_ns0_other-290_80\n") || strings.Contains(prefix, "other-9") {
			t.Fatalf("the default route is not ns0/app-290's:\n%s", lastLines(prefix, 3))
		}
		if !strings.Contains(cfg, "backend ing_ns0_other-290_80") || strings.Contains(cfg, "other-9") {
			t.Fatal("ns9/app-9's default backend became a backend")
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
