package chart

import (
	"path"
	"strings"
	"testing"
)

// TestChartShipsLibrariesWithoutTests: the chart holds every default library and none
// of their validation tests (<lib>.tests.yaml, left out by .helmignore): the config
// drops them anyway, and they would only make the chart larger.
func TestChartShipsLibrariesWithoutTests(t *testing.T) {
	t.Parallel()
	have := map[string]bool{}
	for _, f := range loadChart(t).Files {
		if path.Dir(f.Name) != "libraries" {
			continue
		}
		if strings.HasSuffix(f.Name, ".tests.yaml") {
			t.Errorf("%s is in the chart", f.Name)
		}
		have[path.Base(f.Name)] = true
	}
	for _, lib := range []string{"base.yaml", "ingress.yaml", "gateway.yaml"} {
		if !have[lib] {
			t.Errorf("libraries/%s is not in the chart", lib)
		}
	}
}
