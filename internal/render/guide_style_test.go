package render

import (
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// guideTemplate is written as the HAPTIC performance guide writes templates: trim
// markers in every position its examples use, resources.<name>.List() and
// lower-case field access, shared.ComputeIfAbsent with a multi-line func literal.
// One change: untyped field values are interfaces, so the index map of the last
// example is map[any]any (the guide's map[string]any needs a string key).
// The guide elides the bodies of its loops (...); here they print what they found.
const guideTemplate = `global
{#- GOOD: Filter early, process less data -#}
{%- var matching_ingresses = []any{} %}
{%- for _, ingress := range resources.ingresses.List() %}
  {%- if ingress.spec.ingressClassName == "haptic" %}
    {%- matching_ingresses = append(matching_ingresses, ingress) %}
  {%- end %}
{%- end %}
{%- for _, ingress := range matching_ingresses %}
  # early {{ ingress.(map[string]any)["metadata"].(map[string]any)["name"] }}
{%- end %}

{#- ALTERNATIVE: Process with inline filtering -#}
{%- for _, ingress := range resources.ingresses.List() %}
  {%- if ingress.spec.ingressClassName == "haptic" %}
  # inline {{ ingress.metadata.name }}
  {%- end %}
{%- end %}

{%- var _, _ = shared.ComputeIfAbsent("sorted_routes", func() any {
  var sorted = []any{}
  for _, route := range resources.httproutes.List() {
    sorted = append(sorted, route)
  }
  return sorted
}) -%}
{%- var analysis_routes = shared.Get("sorted_routes") %}
  # routes {{ len(analysis_routes.([]any)) }}

{%- var ingresses = resources.ingresses.List() %}
{%- var services = resources.services.List() %}
{#- AVOID: O(n*m) complexity -#}
{%- for _, ingress := range ingresses %}
  {%- for _, service := range services %}
    {%- if ingress.spec.defaultBackend.service.name == service.metadata.name %}
  # nested {{ ingress.metadata.name }} {{ service.metadata.name }}
    {%- end %}
  {%- end %}
{%- end %}

{#- BETTER: Use indexing or filtering -#}
{%- var service_map = map[any]any{} %}
{%- for _, service := range services %}
  {%- service_map[service.metadata.name] = service %}
{%- end %}
{%- for _, ingress := range ingresses %}
  {%- var service = service_map[ingress.spec.defaultBackend.service.name] %}
  # indexed {{ ingress.metadata.name }} {{ service != nil }}
{%- end %}
`

func rawObject(ns, name string, spec map[string]any) snapshot.Object {
	raw := map[string]any{"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}
	return snapshot.Object{Namespace: ns, Name: name, Raw: raw}
}

// TestGuideStyleTemplate compiles and renders guideTemplate through the engine
// (untyped access, the dialect of lower-case field names).
func TestGuideStyleTemplate(t *testing.T) {
	t.Parallel()
	wr := func(api, res string) v1alpha1.WatchedResource {
		return v1alpha1.WatchedResource{APIVersion: api, Resources: res, IndexBy: []string{"metadata.namespace", "metadata.name"}}
	}
	c := &v1alpha1.HAProxyTemplateConfig{Spec: v1alpha1.HAProxyTemplateConfigSpec{
		HAProxyConfig: v1alpha1.MainTemplate{Template: guideTemplate},
		WatchedResources: map[string]v1alpha1.WatchedResource{
			"ingresses":  wr("networking.k8s.io/v1", "ingresses"),
			"httproutes": wr("gateway.networking.k8s.io/v1", "httproutes"),
			"services":   wr("v1", "services"),
		},
	}}
	c.Default()
	c.Spec.TemplatingSettings.ResourceAccess = v1alpha1.AccessUntyped
	backend := func(svc string) map[string]any {
		return map[string]any{"service": map[string]any{"name": svc}}
	}
	idx := indexPaths("metadata.namespace", "metadata.name")
	snap := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{
		"ingresses": snapshot.NewStore("ingresses", idx, nil, []snapshot.Object{
			rawObject("a", "mine", map[string]any{"ingressClassName": "haptic", "defaultBackend": backend("web")}),
			rawObject("a", "theirs", map[string]any{"ingressClassName": "nginx", "defaultBackend": backend("gone")}),
		}),
		"httproutes": snapshot.NewStore("httproutes", idx, nil, []snapshot.Object{rawObject("a", "r1", map[string]any{}), rawObject("a", "r2", map[string]any{})}),
		"services":   snapshot.NewStore("services", idx, nil, []snapshot.Object{rawObject("a", "web", map[string]any{})}),
	}}
	got := mustRender(t, &c.Spec, Options{}, snap)
	want := strings.Join([]string{"global",
		"    # early mine",
		"    # inline mine",
		"    # routes 2",
		"    # nested mine web",
		"    # indexed mine true",
		"    # indexed theirs false", ""}, "\n")
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
