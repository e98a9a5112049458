package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/golden"
)

// TestReferenceUpToDate checks docs/crd-reference.md against the CRDs (-update
// rewrites it) and that it documents both kinds and a known field.
func TestReferenceUpToDate(t *testing.T) {
	out, err := reference(filepath.Join("..", "..", "charts", "haptic", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## HAProxyTemplateConfig", "## HAProxyCfg", "| `spec.dataplane.minDeploymentInterval` |"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the reference lacks %q", want)
		}
	}
	golden.Assert(t, filepath.Join("..", "..", "docs", "crd-reference.md"), out)
}
