package chart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"

	"sigs.k8s.io/yaml"

	"github.com/haproxy-haptic/haptic/internal/golden"
)

// TestValuesSchema checks that values.schema.json and the README's values table are
// what values.yaml generates (run with -update after changing values.yaml), and that
// every value is documented.
func TestValuesSchema(t *testing.T) {
	t.Parallel()
	values, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	schema, list, undocumented, err := generateSchema(values)
	if err != nil {
		t.Fatal(err)
	}
	if len(undocumented) > 0 {
		t.Errorf("values without a \"# --\" description in values.yaml: %s", strings.Join(undocumented, ", "))
	}
	golden.AssertJSON(t, filepath.Join(chartDir, "values.schema.json"), schema)
	readmePath := filepath.Join(chartDir, "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	updated, err := replaceSection(string(readme), valuesTable(list, schema))
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, readmePath, []byte(updated))
}

// lint runs helm lint's rules (Helm's own linter, what `helm lint` runs) on a chart
// with user values and returns its errors.
func helmLint(t *testing.T, dir string, vals map[string]any) []string {
	t.Helper()
	res := lint.RunAll(dir, copyValues(t, vals), releaseNamespace)
	var msgs []string
	for _, m := range res.Messages {
		if m.Severity >= support.ErrorSev {
			msgs = append(msgs, m.Err.Error())
		}
	}
	return msgs
}

// TestLintCRDsChart lints charts/haptic-crds. (TestLint lints charts/haptic; every
// render of the manifest tests validates its value set against values.schema.json,
// as Helm's ToRenderValues does for install and upgrade.)
func TestLintCRDsChart(t *testing.T) {
	t.Parallel()
	if errs := helmLint(t, crdsChartDir, nil); len(errs) > 0 {
		t.Errorf("helm lint charts/haptic-crds: %s", strings.Join(errs, "\n"))
	}
}

// TestLintRejectsInvalidValues checks that the schema makes helm lint fail on a
// mistyped key, a wrong type and a value outside its enum, naming the value.
func TestLintRejectsInvalidValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		vals map[string]any
		want []string // all in one error message
	}{
		{"unknown key", map[string]any{"controller": map[string]any{"replicaz": 2}},
			[]string{"/controller", "additional properties 'replicaz' not allowed"}},
		{"unknown top-level key", map[string]any{"haproxyy": map[string]any{}},
			[]string{"additional properties 'haproxyy' not allowed"}},
		{"wrong type", map[string]any{"haproxy": map[string]any{"replicas": "two"}},
			[]string{"/haproxy/replicas", "got string, want integer"}},
		{"not in enum", map[string]any{"controller": map[string]any{"webhook": map[string]any{"failurePolicy": "Sometimes"}}},
			[]string{"/controller/webhook/failurePolicy", "Fail", "Ignore"}},
		{"not a duration", map[string]any{"controller": map[string]any{"config": map[string]any{"dataplane": map[string]any{"syncTimeout": "soon"}}}},
			[]string{"/controller/config/dataplane/syncTimeout", "does not match pattern"}},
		{"port out of range", map[string]any{"haproxy": map[string]any{"ports": map[string]any{"http": 70000}}},
			[]string{"/haproxy/ports/http", "maximum"}},
	}
	file, err := os.ReadFile(filepath.Join("testdata", "invalid-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var fromFile map[string]any
	if err := yaml.Unmarshal(file, &fromFile); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct {
		name string
		vals map[string]any
		want []string
	}{"testdata/invalid-values.yaml", fromFile, []string{"additional properties 'replicaz' not allowed", "/haproxy/replicas", "got string, want integer"}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := helmLint(t, chartDir, c.vals)
			all := strings.Join(errs, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("helm lint errors do not contain %q:\n%s", w, all)
				}
			}
			if len(errs) > 0 {
				t.Logf("helm lint says: %s", errs[0])
			}
		})
	}
}
