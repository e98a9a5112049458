package chart

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/golden"
)

var crdsChartDir = filepath.Join("..", "..", "charts", "haptic-crds")

// TestCRDsChart checks that the CRD chart's templates are the main chart's crds/,
// file for file (-update copies them), and that it renders exactly those CRDs.
func TestCRDsChart(t *testing.T) {
	t.Parallel()
	src := filepath.Join(chartDir, "crds")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	golden.Reset(t, filepath.Join(crdsChartDir, "templates"))
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, filepath.Join(crdsChartDir, "templates", e.Name()), data)
	}
	copies, err := os.ReadDir(filepath.Join(crdsChartDir, "templates"))
	if err != nil {
		t.Fatal(err)
	}
	if len(copies) != len(entries) {
		t.Errorf("charts/haptic-crds/templates has %d files, charts/haptic/crds %d", len(copies), len(entries))
	}
}

// TestGatewayClassFitsItsCRD checks the GatewayClass fields the Gateway API CRD
// limits and the Go types do not: spec.description is at most 64 bytes.
func TestGatewayClassFitsItsCRD(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"PerGateway", "Shared"} {
		r := renderChart(t, map[string]any{"controller": map[string]any{"config": map[string]any{"gateways": map[string]any{"provisioning": mode}}}}, nil)
		d, _ := field(r.one(t, "GatewayClass"), "spec", "description").(string)
		if d == "" || len(d) > 64 {
			t.Errorf("%s: GatewayClass description %q (%d bytes), want 1-64", mode, d, len(d))
		}
	}
}
