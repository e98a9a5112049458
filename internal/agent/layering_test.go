package agent

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAgentStaysSmall: the agent and its runtime client never pull in Kubernetes
// packages (not even the API types: the agent checks configs with
// validate/haproxycheck, not validate), the template engine or the controller's
// stages.
func TestAgentStaysSmall(t *testing.T) {
	// The runtime client needs the map-file rules (internal/haproxy/config), which
	// need the plain bundle type; both import only the standard library.
	runtimeMayImport := map[string]bool{"internal/haproxy/runtime": true, "internal/haproxy/config": true, "internal/bundle": true}
	const module = "github.com/haproxy-haptic/haptic/"
	forbidden := []string{
		"k8s.io/", "sigs.k8s.io/", "github.com/open2b/scriggo",
		module + "api/", module + "internal/watch", module + "internal/store", module + "internal/render",
		module + "internal/schema", module + "internal/pipeline",
	}
	for _, pkg := range []string{"cmd/haptic-agent", "internal/agent", "internal/haproxy/runtime"} {
		out, err := exec.Command("go", "list", "-deps", module+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
			if dep == module+"internal/validate" {
				t.Errorf("%s imports %s (and through it the API types); use internal/validate/haproxycheck", pkg, dep)
			}
			if pkg == "internal/haproxy/runtime" && strings.HasPrefix(dep, module) && !runtimeMayImport[strings.TrimPrefix(dep, module)] {
				t.Errorf("the runtime client imports %s; it should need only the standard library and the config syntax", dep)
			}
		}
	}
}
