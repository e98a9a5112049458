package libraries

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

// libraries are merged in this order, later values winning.
var libraries = []string{
	"../../charts/haptic/libraries/base.yaml",
	"../../charts/haptic/libraries/ingress.yaml",
	"../../charts/haptic/libraries/gateway.yaml",
}

func load(t *testing.T) *pipeline.Pipeline {
	t.Helper()
	cfg, err := config.LoadFiles(config.WithTests(libraries...)...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(cfg, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func requireHAProxy(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy is not installed: make test installs it (apt-get install -y haproxy)")
	}
}

// TestLibraryValidationTests runs every validation test of the libraries, as
// `haptic validate -f base.yaml -f ingress.yaml` does.
func TestLibraryValidationTests(t *testing.T) {
	requireHAProxy(t)
	p := load(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	checker := &validate.Checker{Layout: p.Layout}
	rep, err := validate.Run(ctx, p.Config.Spec.ValidationTests, p.RenderFunc(nil), validate.Options{Checker: checker})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed == 0 {
		t.Fatal("no validation test ran")
	}
	if rep.Failed > 0 {
		var b strings.Builder
		if err := rep.WriteSummary(&b, false); err != nil {
			t.Fatal(err)
		}
		t.Fatalf("%d of %d validation tests failed:\n%s", rep.Failed, rep.Failed+rep.Passed, b.String())
	}
	t.Logf("%d validation tests passed", rep.Passed)
}

// ingresses generates n Ingresses of our class, each with its own host, an Exact
// and a Prefix path, and one Service with an EndpointSlice per Ingress.
func ingresses(n int) map[string][]map[string]any {
	raw := map[string][]map[string]any{}
	for i := range n {
		ns, name := "ns"+fmt.Sprint(i%10), fmt.Sprintf("app-%d", i)
		raw["ingresses"] = append(raw["ingresses"], map[string]any{
			"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
			"metadata": map[string]any{"namespace": ns, "name": name},
			"spec": map[string]any{
				"ingressClassName": "haptic",
				"rules": []any{map[string]any{
					"host": name + ".example.com",
					"http": map[string]any{"paths": []any{
						map[string]any{"path": "/health", "pathType": "Exact",
							"backend": map[string]any{"service": map[string]any{"name": name, "port": map[string]any{"number": 80}}}},
						map[string]any{"path": "/api", "pathType": "Prefix",
							"backend": map[string]any{"service": map[string]any{"name": name, "port": map[string]any{"name": "http"}}}},
					}},
				}},
			},
		})
		raw["services"] = append(raw["services"], map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"namespace": ns, "name": name},
			"spec":     map[string]any{"ports": []any{map[string]any{"name": "http", "port": 80, "targetPort": "http"}}},
		})
		raw["endpoints"] = append(raw["endpoints"], map[string]any{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata": map[string]any{"namespace": ns, "name": name + "-abcde",
				"labels": map[string]any{"kubernetes.io/service-name": name}},
			"addressType": "IPv4",
			"ports":       []any{map[string]any{"name": "http", "port": 8080}},
			"endpoints": []any{map[string]any{
				"addresses":  []any{fmt.Sprintf("10.%d.%d.%d", i/65536%256, i/256%256, i%256)},
				"conditions": map[string]any{"ready": true},
			}},
		})
	}
	return raw
}

func renderFixture(t *testing.T, p *pipeline.Pipeline, raw map[string][]map[string]any) *render.Result {
	t.Helper()
	snap, err := p.Builder.Snapshot(raw)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Render(context.Background(), &pipeline.Fixture{Snapshot: snap, ExtraContext: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func lines(res *render.Result, target string) int {
	for _, f := range res.Bundle.Files {
		if f.Target() == target {
			if f.Content.String() == "" {
				return 0
			}
			return strings.Count(strings.TrimSuffix(f.Content.String(), "\n"), "\n") + 1
		}
	}
	return -1
}

// TestPathMapsLinear guards the rule that map sizes follow the number of routes:
// 1,000 Ingresses with one Exact and one Prefix path each give exactly one line per
// route in each map (the Prefix path is one prefix-exact and one prefix line).
func TestPathMapsLinear(t *testing.T) {
	assertMapsLinear(t, "Ingresses", ingresses, func(t *testing.T, n int, cfg string) {
		if got := strings.Count(cfg, "\nbackend ing_"); got != 2*n {
			t.Errorf("%d Ingresses: %d ingress backends, want %d (port by number and by name)", n, got, 2*n)
		}
	})
}

// assertMapsLinear renders fixture(n) for 200 and 1,000 routes: each route is one
// line in host.map, path-exact.map, path-prefix-exact.map and path-prefix.map, and
// none in the regex and weighted maps; checkConfig looks at haproxy.cfg.
func assertMapsLinear(t *testing.T, what string, fixture func(n int) map[string][]map[string]any, checkConfig func(t *testing.T, n int, cfg string)) {
	t.Helper()
	p := load(t)
	for _, n := range []int{200, 1000} {
		start := time.Now()
		res := renderFixture(t, p, fixture(n))
		t.Logf("%d %s rendered in %v", n, what, time.Since(start))
		want := map[string]int{
			"map:host.map":              n,
			"map:path-exact.map":        n,
			"map:path-prefix-exact.map": n,
			"map:path-prefix.map":       n,
			"map:path-regex.map":        0,
			"map:weighted.map":          0,
		}
		for target, w := range want {
			if got := lines(res, target); got != w {
				t.Errorf("%d %s: %s has %d lines, want %d", n, what, target, got, w)
			}
		}
		var cfg string
		for _, f := range res.Bundle.Files {
			if f.Target() == "haproxy.cfg" {
				cfg = f.Content.String()
			}
		}
		checkConfig(t, n, cfg)
	}
}

// TestWeightedRouting plugs extra contributions into the base library's map
// extension points, as other libraries do, and checks a MULTI: route with its
// weighted map is valid for HAProxy.
func TestWeightedRouting(t *testing.T) {
	requireHAProxy(t)
	cfg, err := config.LoadFiles(libraries...)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spec.TemplateSnippets["map-path-exact-test"] = v1alpha1.TemplateSnippet{Template: "w.example.com/split MULTI:split1\n"}
	cfg.Spec.TemplateSnippets["map-host-test"] = v1alpha1.TemplateSnippet{Template: "w.example.com w.example.com\n"}
	// Weights 3:1 over 4 slots.
	cfg.Spec.TemplateSnippets["map-weighted-test"] = v1alpha1.TemplateSnippet{Template: "split1 4\n" +
		"{% for i := 0; i < 4; i++ %}split1/{{ i }} {% if i < 3 %}blue{% else %}green{% end %}\n{% end %}"}
	cfg.Spec.TemplateSnippets["backends-test"] = v1alpha1.TemplateSnippet{Template: "backend blue\nserver s1 127.0.0.1:1\nbackend green\nserver s1 127.0.0.1:2\n"}
	p, err := pipeline.New(cfg, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := renderFixture(t, p, nil)
	var weighted string
	for _, f := range res.Bundle.Files {
		if f.Target() == "map:weighted.map" {
			weighted = f.Content.String()
		}
	}
	if want := "split1 4\nsplit1/0 blue\nsplit1/1 blue\nsplit1/2 blue\nsplit1/3 green\n"; weighted != want {
		t.Errorf("weighted.map = %q, want %q", weighted, want)
	}
	if err := (&validate.Checker{Layout: p.Layout}).Check(context.Background(), res.Bundle); err != nil {
		t.Fatalf("haproxy -c: %v", err)
	}
}
