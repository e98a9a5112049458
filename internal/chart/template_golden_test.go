package chart

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/haproxy-haptic/haptic/internal/golden"
)

// TestTemplateGoldens renders the chart (`helm template`) with the defaults and with
// each value set of the manifest tests (one per documented value group) and compares
// the manifests with testdata/template/<set>.yaml. Values generated at install time
// (the agent password, the webhook certificates) are replaced by a placeholder, and
// the parts of the HAProxyTemplateConfig that come from the libraries by a placeholder
// (the watched resources by their names, which the RBAC follows)
// (TestConfigIsTheLibraryMerge checks their content), so that a library change does
// not touch these files.
func TestTemplateGoldens(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "template")
	golden.Reset(t, dir)
	for name, vals := range valueSets {
		t.Run(name, func(t *testing.T) {
			r := renderChart(t, vals, nil)
			var b strings.Builder
			for _, o := range r.all(t) {
				maskGenerated(o.obj)
				out, err := yaml.Marshal(o.obj)
				if err != nil {
					t.Fatal(err)
				}
				b.WriteString("---\n# Source: " + o.file + "\n")
				b.Write(out)
			}
			golden.Assert(t, filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml"), []byte(b.String()))
		})
	}
}

// generatedPlaceholder stands for a value Helm generates on each render.
const generatedPlaceholder = "<generated>"

// maskGenerated replaces what differs on every render: Secret data and webhook CA bundles.
func maskGenerated(obj map[string]any) {
	switch obj["kind"] {
	case "Secret":
		for _, key := range []string{"data", "stringData"} {
			if m, ok := obj[key].(map[string]any); ok {
				for k, v := range m {
					if k != "username" {
						m[k] = generatedPlaceholder
					} else {
						m[k] = v
					}
				}
			}
		}
	case "HAProxyTemplateConfig":
		spec, _ := obj["spec"].(map[string]any)
		for _, part := range libraryParts {
			if m, ok := spec[part].(map[string]any); ok && part != "watchedResources" {
				spec[part] = "<from the libraries>"
			} else if ok {
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				spec[part] = "<from the libraries: " + strings.Join(keys, ", ") + ">"
			}
		}
	case "ValidatingWebhookConfiguration":
		hooks, _ := obj["webhooks"].([]any)
		for _, h := range hooks {
			if cc, ok := field(h.(map[string]any), "clientConfig").(map[string]any); ok && cc["caBundle"] != nil {
				cc["caBundle"] = generatedPlaceholder
			}
		}
	}
}
