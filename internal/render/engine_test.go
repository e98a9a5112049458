package render

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// ingressType is a hand-built stand-in for a schema type: render must not care where
// the struct type came from.
var ingressType = func() reflect.Type {
	meta := reflect.StructOf([]reflect.StructField{
		{Name: "Name", Type: reflect.TypeOf(""), Tag: `json:"name"`},
		{Name: "Namespace", Type: reflect.TypeOf(""), Tag: `json:"namespace"`},
	})
	spec := reflect.StructOf([]reflect.StructField{{Name: "IngressClassName", Type: reflect.TypeOf(""), Tag: `json:"ingressClassName"`}})
	return reflect.StructOf([]reflect.StructField{
		{Name: "Metadata", Type: reflect.PointerTo(meta), Tag: `json:"metadata"`},
		{Name: "Spec", Type: reflect.PointerTo(spec), Tag: `json:"spec"`},
	})
}()

func ingress(ns, name, class string) snapshot.Object {
	v := reflect.New(ingressType)
	meta := reflect.New(ingressType.Field(0).Type.Elem())
	meta.Elem().Field(0).SetString(name)
	meta.Elem().Field(1).SetString(ns)
	spec := reflect.New(ingressType.Field(1).Type.Elem())
	spec.Elem().Field(0).SetString(class)
	v.Elem().Field(0).Set(meta)
	v.Elem().Field(1).Set(spec)
	raw := map[string]any{"metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"ingressClassName": class}}
	return snapshot.Object{Namespace: ns, Name: name, Raw: raw, Convert: func(map[string]any) (reflect.Value, error) { return v, nil }}
}

func testSpec(cfg string) *v1alpha1.HAProxyTemplateConfigSpec {
	c := &v1alpha1.HAProxyTemplateConfig{Spec: v1alpha1.HAProxyTemplateConfigSpec{
		HAProxyConfig: v1alpha1.MainTemplate{Template: cfg},
		WatchedResources: map[string]v1alpha1.WatchedResource{
			"ingresses": {APIVersion: "networking.k8s.io/v1", Resources: "ingresses", IndexBy: []string{"metadata.namespace", "metadata.name"}},
		},
	}}
	c.Default()
	return &c.Spec
}

func testSnapshot(objs ...snapshot.Object) *snapshot.Snapshot {
	return &snapshot.Snapshot{Stores: map[string]*snapshot.Store{
		"ingresses": snapshot.NewStore("ingresses", indexPaths("metadata.namespace", "metadata.name"), ingressType, objs),
	}}
}

func mustRender(t *testing.T, spec *v1alpha1.HAProxyTemplateConfigSpec, opts Options, snap *snapshot.Snapshot) string {
	t.Helper()
	return mustRenderResult(t, spec, opts, snap).Bundle.Config().Content.String()
}

// mustRenderResult compiles spec and renders snap once.
func mustRenderResult(t *testing.T, spec *v1alpha1.HAProxyTemplateConfigSpec, opts Options, snap *snapshot.Snapshot) *Result {
	t.Helper()
	e, err := Compile(spec, opts)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	res, err := e.Render(context.Background(), Input{Snapshot: snap})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return res
}

func TestTypedAccess(t *testing.T) {
	spec := testSpec(`global
{% for _, ing := range resources.Ingresses.List() %}
  {% if ing.Spec.IngressClassName == "haptic" %}
# {{ ing.Metadata.Namespace }}/{{ ing.Metadata.Name }}
  {% end %}
{% end %}
# single={{ resources.Ingresses.GetSingle("b", "two").Metadata.Name }}
# fetched={{ len(resources.Ingresses.Fetch("a")) }}
`)
	opts := Options{Types: map[string]reflect.Type{"ingresses": ingressType}}
	got := mustRender(t, spec, opts, testSnapshot(ingress("b", "two", "haptic"), ingress("a", "one", "haptic"), ingress("a", "x", "other")))
	want := "global\n    # a/one\n    # b/two\n    # single=two\n    # fetched=2\n"
	if got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func TestUntypedAccess(t *testing.T) {
	spec := testSpec(`global
{% for _, ing := range resources["ingresses"].List() %}
# {{ dig(ing, "metadata", "name") }} {{ dig(ing, "spec", "missing", "deep") == nil }}
{% end %}`)
	spec.TemplatingSettings.ResourceAccess = v1alpha1.AccessUntyped
	got := mustRender(t, spec, Options{}, testSnapshot(ingress("a", "one", "c")))
	if want := "global\n    # one true\n"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestSnippetsByNameAndPattern(t *testing.T) {
	spec := testSpec(`global
{{ render "header" }}
{{ render_glob "backends-*" }}`)
	p := func(n int32) *int32 { return &n }
	spec.TemplateSnippets = map[string]v1alpha1.TemplateSnippet{
		"header":     {Template: "# header {{ fallback(maxconn, 2000) }}", Priority: p(100)},
		"backends-b": {Template: "# b", Priority: p(100)},
		"backends-a": {Template: "# a", Priority: p(100)},
		"backends-z": {Template: "# z first", Priority: p(10)},
		"other":      {Template: "# never", Priority: p(1)},
	}
	got := mustRender(t, spec, Options{}, testSnapshot())
	want := "global\n    # header 2000\n    # z first\n    # a\n    # b\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestExtraContextTopLevel(t *testing.T) {
	spec := testSpec("global\n    maxconn {{ fallback(maxconn, 2000) }}\n{% if debug %}# debug{% end %}\n# {{ extraContext[\"custom_key\"] }} {{ custom_key }}")
	spec.TemplatingSettings.ExtraContext = &runtime.RawExtension{Raw: []byte(`{"maxconn": 5000, "debug": true, "custom_key": "v"}`)}
	got := mustRender(t, spec, Options{}, testSnapshot())
	if want := "global\n    maxconn 5000\n    # debug\n    # v v\n"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestSharedComputeOnceConcurrently(t *testing.T) {
	s := newShared(nil)
	var calls atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _ := s.ComputeIfAbsent("k", func() any { calls.Add(1); return 42 })
			if v != 42 {
				t.Errorf("got %v", v)
			}
		}()
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("factory ran %d times", calls.Load())
	}
	if s.Get("k") != 42 || s.Get("missing") != nil {
		t.Fatal("Get")
	}
}

func TestSharedAcrossTemplatesOfOneRender(t *testing.T) {
	spec := testSpec(`global
{% var v, _ = shared.ComputeIfAbsent("k", func() any { return "from-cfg" }) %}# {{ v }}`)
	spec.Maps = map[string]v1alpha1.GeneratedFile{}
	for _, n := range []string{"a.map", "b.map", "c.map"} {
		spec.Maps[n] = v1alpha1.GeneratedFile{Template: `{% var v, _ = shared.ComputeIfAbsent("k", func() any { return "from-map" }) %}{{ v }} x`}
	}
	res := mustRenderResult(t, spec, Options{}, nil)
	first := ""
	for _, f := range res.Bundle.Files {
		val := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(f.Content.String(), "global\n"), "    # "))[0]
		if first == "" {
			first = val
		}
		if val != first {
			t.Fatalf("%s saw %q, another template saw %q: factory ran twice", f.Target(), val, first)
		}
	}
}

// A shared value's factory is timed once, under its key, and counted in the timing of
// the file that asked for it first as shared work, not in the others'; a factory
// nested in another is the outer one's time.
func TestSharedWorkIsTimedApart(t *testing.T) {
	s := newShared(nil)
	s.ComputeIfAbsent("outer", func() any {
		time.Sleep(2 * time.Millisecond)
		v, _ := s.ComputeIfAbsent("inner", func() any { time.Sleep(2 * time.Millisecond); return 1 })
		return v
	})
	s.ComputeIfAbsent("outer", func() any { t.Fatal("computed twice"); return nil })
	if len(s.timings) != 1 || s.timings[0].Target != "outer" || s.timings[0].Duration < 4*time.Millisecond || s.spent() != s.timings[0].Duration {
		t.Fatalf("timings %+v, spent %v", s.timings, s.spent())
	}

	spec := testSpec(`global
{% var v, _ = shared.ComputeIfAbsent("k", func() any { return "v" }) %}# {{ v }}`)
	spec.Maps = map[string]v1alpha1.GeneratedFile{"a.map": {Template: `{% var v, _ = shared.ComputeIfAbsent("k", func() any { return "w" }) %}{{ v }} x`}}
	res := mustRenderResult(t, spec, Options{}, nil)
	if len(res.Shared) != 1 || res.Shared[0].Target != "k" {
		t.Fatalf("shared timings %+v", res.Shared)
	}
	for _, tm := range res.Timings {
		want := time.Duration(0)
		if tm.Target == "haproxy.cfg" {
			want = res.Shared[0].Duration
		}
		if tm.Shared != want || tm.Shared > tm.Duration {
			t.Errorf("%s: shared %v of %v, want %v", tm.Target, tm.Shared, tm.Duration, want)
		}
	}
}

func TestCompileErrorNamesTemplateLineAndSource(t *testing.T) {
	spec := testSpec("global\n{{ render \"broken\" }}")
	spec.TemplateSnippets = map[string]v1alpha1.TemplateSnippet{"broken": {Template: "ok line\n{% if %}\n"}}
	_, err := Compile(spec, Options{})
	var te *TemplateError
	if !errors.As(err, &te) {
		t.Fatalf("want TemplateError, got %v", err)
	}
	if te.Template != "snippet broken" || te.Line != 2 || !strings.Contains(te.Source, "{% if %}") {
		t.Fatalf("got %+v", te)
	}
}

func TestFailNamesMessage(t *testing.T) {
	spec := testSpec(`global
{% for _, ing := range resources.Ingresses.List() %}{% if ing.Spec.IngressClassName == "" %}{{ fail("ingress " + ing.Metadata.Name + ": no class") }}{% end %}{% end %}`)
	e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Render(context.Background(), Input{Snapshot: testSnapshot(ingress("a", "bad", ""))})
	var te *TemplateError
	if !errors.As(err, &te) || !te.Failed || te.Message != "ingress bad: no class" || te.Template != "haproxy.cfg" {
		t.Fatalf("got %#v", err)
	}
}

func TestRuntimeErrorHasPosition(t *testing.T) {
	spec := testSpec("global\n# {{ toint(\"x\") }}")
	e, err := Compile(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Render(context.Background(), Input{})
	var te *TemplateError
	if !errors.As(err, &te) || te.Line != 2 || !strings.Contains(te.Message, "not an integer") {
		t.Fatalf("got %v", err)
	}
}

func TestRuntimeErrorNamesObjectAndLine(t *testing.T) {
	spec := testSpec(`global
{{ render "loop" }}`)
	spec.TemplateSnippets = map[string]v1alpha1.TemplateSnippet{"loop": {Template: `{% for _, ing := range resources.Ingresses.List() %}
# {{ ing.Metadata.Name }}
# class {{ ing.Spec.IngressClassName }}
{% end %}`}}
	e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	var objs []snapshot.Object
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		objs = append(objs, ingress("ns", n, "x"))
	}
	bad := objs[4].TypedValue().Elem().Field(1)
	bad.Set(reflect.Zero(bad.Type())) // ns/e has no spec
	_, err = e.Render(context.Background(), Input{Snapshot: testSnapshot(objs...)})
	var te *TemplateError
	if !errors.As(err, &te) {
		t.Fatalf("got %v", err)
	}
	if te.Object != "ingresses ns/e" || te.Template != "snippet loop" || te.Line != 3 {
		t.Fatalf("got %+v\n%v", te, err)
	}
	if !strings.Contains(err.Error(), "# class {{ ing.Spec.IngressClassName }}") {
		t.Fatalf("source line missing: %v", err)
	}
}

func TestFailInsideComputeIfAbsent(t *testing.T) {
	spec := testSpec(`global
{% var v, _ = shared.ComputeIfAbsent("k", func() any { fail("bad object"); return 1 }) %}# {{ v }}`)
	// A second template reads the same key: it must see the failure too, not a value.
	spec.Maps = map[string]v1alpha1.GeneratedFile{"m.map": {Template: `{% var v, _ = shared.ComputeIfAbsent("k", func() any { fail("bad object"); return 2 }) %}{{ v }} x`}}
	e, err := Compile(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Render(context.Background(), Input{})
	var te *TemplateError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "bad object") {
		t.Fatalf("got %v", err)
	}
}
