package chart

import (
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/config"
)

// Libraries whose keys collide, to pin down the merge: order base → ingress →
// gateway, maps merge key by key, lists and scalars are replaced, empty values ("",
// false, []) included — as config.Merge (haptic merge, validate, render) does. The
// real libraries collide only on equal definitions, so they cannot tell the order
// apart.
var collidingLibraries = map[string]string{
	"base": `apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyTemplateConfig
metadata: {name: base}
spec:
  haproxyConfig: {template: "global\n"}
  templateSnippets:
    shared: {template: base, priority: 5}
    base-only: {template: b}
  maps:
    host.map: {template: base}
`,
	"ingress": `apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyTemplateConfig
metadata: {name: ingress}
spec:
  watchedResources:
    services: {apiVersion: v1, resources: services, indexBy: [a, b], debounceInterval: 1s, enableValidationWebhook: true}
    endpoints: {apiVersion: discovery.k8s.io/v1, resources: endpointslices, indexBy: [a]}
  templateSnippets:
    shared: {template: ingress}
    ingress-only: {template: i}
  maps:
    host.map: {template: ingress, postProcessing: [{type: regex_replace, params: {pattern: x, replacement: z}}]}
`,
	"gateway": `apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyTemplateConfig
metadata: {name: gateway}
spec:
  watchedResources:
    services: {apiVersion: v1, resources: services, indexBy: [c], debounceInterval: "", store: full, enableValidationWebhook: false}
    endpoints: {apiVersion: discovery.k8s.io/v1, resources: endpointslices, indexBy: []}
  templateSnippets:
    shared: {template: gateway, priority: 7}
  maps:
    host.map: {template: gateway}
`,
}

// TestMergeOrder renders the chart with colliding libraries in place of the real
// ones and compares its config with config.MergeFiles of the same files.
func TestMergeOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orig := loadChart(t)
	ch := *orig
	ch.Files = nil
	for _, f := range orig.Files {
		if filepath.Dir(f.Name) != "libraries" {
			ch.Files = append(ch.Files, f)
		}
	}
	var paths []string
	for _, lib := range []string{"base", "ingress", "gateway"} {
		p := filepath.Join(dir, lib+".yaml")
		if err := os.WriteFile(p, []byte(collidingLibraries[lib]), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		ch.Files = append(ch.Files, &common.File{Name: "libraries/" + lib + ".yaml", Data: []byte(collidingLibraries[lib])})
	}
	r, err := renderWith(t, &ch, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := r.one(t, v1alpha1.KindHAProxyTemplateConfig)
	want, err := config.MergeFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range libraryParts {
		if g, w := field(got, "spec", part), field(want, "spec", part); !equal(t, g, w) {
			t.Errorf("spec.%s:\n got  %v\n want %v", part, normalize(t, g), normalize(t, w))
		}
	}
	if s := field(got, "spec", "templateSnippets", "shared", "template"); s != "gateway" {
		t.Errorf("the last library does not win: shared snippet %v", s)
	}
}
