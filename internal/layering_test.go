// Package internal_test enforces the layering of the data path: the pure middle
// (snapshot → render → bundle → plan) never talks to Kubernetes, HAProxy's config
// syntax (internal/haproxy/config) is a leaf, and the controller side reaches the
// agent only through its protocol (internal/agentapi). The agent's own rules are in
// internal/agent/layering_test.go.
package internal_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/haproxy-haptic/haptic"

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

// imports reports whether dependency d is forbidden by f: a prefix when f ends in
// "/", else the package f or one below it ("internal/agent" does not forbid
// "internal/agentapi").
func imports(d, f string) bool {
	if strings.HasSuffix(f, "/") {
		return strings.HasPrefix(d, f)
	}
	return d == f || strings.HasPrefix(d, f+"/")
}

func TestLayering(t *testing.T) {
	rules := []struct {
		pkgs      []string
		forbidden []string
		why       string
	}{
		{
			pkgs:      []string{"internal/snapshot", "internal/bundle", "internal/render", "internal/schema", "internal/store", "internal/fieldpath", "internal/validate", "internal/config", "internal/pipeline", "internal/plan", "internal/fleetscope"},
			forbidden: []string{"k8s.io/client-go/"},
			why:       "the pure middle of the pipeline must not talk to the API server",
		},
		{
			pkgs:      []string{"internal/snapshot", "internal/bundle", "internal/fieldpath", "internal/plan", "internal/haproxy/config", "internal/note"},
			forbidden: []string{"k8s.io/", "github.com/open2b/scriggo"},
			why:       "the plain data types between stages import nothing heavy",
		},
		{
			pkgs:      []string{"internal/validate"},
			forbidden: []string{"github.com/open2b/scriggo", module + "/internal/render"},
			why:       "validation judges bundles; it does not render",
		},
		{
			pkgs:      []string{"internal/webhook"},
			forbidden: []string{"k8s.io/client-go/", "github.com/open2b/scriggo", module + "/internal/render"},
			why:       "the webhook speaks AdmissionReview; the controller decides (it renders)",
		},
		{
			pkgs: []string{"internal/controller", "internal/deploy", "internal/plan", "internal/render", "internal/publish",
				"internal/pipeline", "internal/webhook", "internal/status/...", "cmd/haptic"},
			forbidden: []string{module + "/internal/agent"},
			why:       "the controller side speaks the agent protocol through internal/agentapi, never the agent's code",
		},
		{
			pkgs:      []string{"internal/agentapi"},
			forbidden: []string{"k8s.io/", "sigs.k8s.io/", "github.com/open2b/scriggo", module + "/api", module + "/internal/agent", module + "/internal/render"},
			why:       "both sides of the agent protocol import it: it holds wire types and a client, nothing heavy",
		},
		{
			pkgs:      []string{"internal/status"},
			forbidden: []string{"k8s.io/client-go/", module + "/internal/status/writer"},
			why:       "status is computed as a pure function; only internal/status/writer talks to the API server",
		},
	}
	for _, r := range rules {
		for _, pkg := range r.pkgs {
			for _, d := range deps(t, pkg) {
				for _, f := range r.forbidden {
					if imports(d, f) {
						t.Errorf("%s imports %s: %s", pkg, d, r.why)
					}
				}
			}
		}
	}
	// HAProxy's config syntax is a leaf: the planner, the renderer, the agent and the
	// runtime client all use it, so it may use nothing of the module but the plain
	// bundle type.
	for _, d := range deps(t, "internal/haproxy/config") {
		if strings.HasPrefix(d, module+"/") && d != module+"/internal/haproxy/config" && d != module+"/internal/bundle" {
			t.Errorf("internal/haproxy/config imports %s: it is a leaf of the module", d)
		}
	}
}
