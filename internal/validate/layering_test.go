package validate

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoClientGo keeps validate usable by the CLI and the agent side without pulling
// in client-go: it reads only bundles, API types and plain data.
func TestNoClientGo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list unavailable: %v: %s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/client-go") || strings.Contains(dep, "open2b/scriggo") {
			t.Errorf("validate depends on %s", dep)
		}
	}
}

// TestHAProxyCheckStaysSmall: the checker the agent uses needs only the standard
// library and bundles, so that the agent binary carries no Kubernetes package.
func TestHAProxyCheckStaysSmall(t *testing.T) {
	const module = "github.com/haproxy-haptic/haptic/"
	out, err := exec.Command("go", "list", "-deps", "./haproxycheck").CombinedOutput()
	if err != nil {
		t.Fatalf("go list unavailable: %v: %s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "k8s.io/") ||
			strings.HasPrefix(dep, module) && dep != module+"internal/bundle" && dep != module+"internal/validate/haproxycheck" {
			t.Errorf("haproxycheck depends on %s", dep)
		}
	}
}
