package store

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/schema"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

func registry(t testing.TB) *schema.Registry {
	t.Helper()
	reg, err := schema.Bundled()
	if err != nil {
		t.Fatalf("schema.Bundled: %v", err)
	}
	return reg
}

// spec is a defaulted spec watching ingresses (typed, filtered by class, indexed by
// namespace), services (typed) and widgets (no schema).
func spec(access string) *v1alpha1.HAProxyTemplateConfigSpec {
	cfg := &v1alpha1.HAProxyTemplateConfig{Spec: v1alpha1.HAProxyTemplateConfigSpec{
		TemplatingSettings: v1alpha1.TemplatingSettings{ResourceAccess: access},
		WatchedResources: map[string]v1alpha1.WatchedResource{
			"ingresses": {
				APIVersion:    "networking.k8s.io/v1",
				Resources:     "ingresses",
				IndexBy:       []string{"metadata.namespace", "metadata.name"},
				FieldSelector: "spec.ingressClassName=haproxy",
			},
			"services": {APIVersion: "v1", Resources: "services"},
			"widgets":  {APIVersion: "example.com/v1", Resources: "widgets"},
		},
	}}
	cfg.Default()
	return &cfg.Spec
}

func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func ingress(t testing.TB, ns, name, class string) map[string]any {
	t.Helper()
	return decode(t, `{
		"apiVersion": "networking.k8s.io/v1",
		"kind": "Ingress",
		"metadata": {
			"namespace": "`+ns+`",
			"name": "`+name+`",
			"labels": {"app": "web"},
			"annotations": {
				"kubectl.kubernetes.io/last-applied-configuration": "{\"big\":\"blob\"}",
				"haproxy.org/keep": "yes"
			},
			"managedFields": [{"manager": "kubectl", "operation": "Apply"}]
		},
		"spec": {
			"ingressClassName": "`+class+`",
			"rules": [{"host": "a.example.com", "http": {"paths": [
				{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}
			]}}]
		}
	}`)
}

func newBuilder(t testing.TB, access string) *Builder {
	t.Helper()
	b, err := NewBuilder(spec(access), registry(t))
	if err != nil {
		t.Fatalf("NewBuilder: %v", err)
	}
	return b
}

func TestDefaultIgnoreFieldsAreSet(t *testing.T) {
	s := spec("")
	if !slices.Equal(s.WatchedResourcesIgnoreFields, v1alpha1.DefaultIgnoreFields) {
		t.Fatalf("defaulted ignore fields = %q, want %q", s.WatchedResourcesIgnoreFields, v1alpha1.DefaultIgnoreFields)
	}
}

func TestAdmitStripsIgnoredFields(t *testing.T) {
	for _, access := range []string{v1alpha1.AccessTyped, v1alpha1.AccessUntyped} {
		t.Run(access, func(t *testing.T) {
			b := newBuilder(t, access)
			raw := ingress(t, "prod", "web", "haproxy")
			o, ok, err := b.Admit("ingresses", raw)
			if err != nil || !ok {
				t.Fatalf("Admit = %v, %v", ok, err)
			}
			meta := o.Raw["metadata"].(map[string]any)
			if _, has := meta["managedFields"]; has {
				t.Error("metadata.managedFields was not stripped")
			}
			ann := meta["annotations"].(map[string]any)
			if _, has := ann["kubectl.kubernetes.io/last-applied-configuration"]; has {
				t.Error("last-applied annotation was not stripped")
			}
			if ann["haproxy.org/keep"] != "yes" {
				t.Errorf("other annotations were stripped too: %v", ann)
			}
			if meta["labels"].(map[string]any)["app"] != "web" {
				t.Error("labels were stripped")
			}
			// raw is modified in place
			if _, has := raw["metadata"].(map[string]any)["managedFields"]; has {
				t.Error("Admit did not strip raw in place")
			}
			if o.Namespace != "prod" || o.Name != "web" || o.Key() != "prod/web" {
				t.Errorf("object key = %q (%q, %q), want prod/web", o.Key(), o.Namespace, o.Name)
			}
		})
	}
}

func TestAdmitCustomIgnoreFields(t *testing.T) {
	s := spec("")
	s.WatchedResourcesIgnoreFields = []string{"spec.rules[0].host", "metadata.labels"}
	b, err := NewBuilder(s, registry(t))
	if err != nil {
		t.Fatal(err)
	}
	o, ok, err := b.Admit("ingresses", ingress(t, "prod", "web", "haproxy"))
	if err != nil || !ok {
		t.Fatalf("Admit = %v, %v", ok, err)
	}
	meta := o.Raw["metadata"].(map[string]any)
	if _, has := meta["labels"]; has {
		t.Error("metadata.labels not stripped")
	}
	if _, has := meta["managedFields"]; !has {
		t.Error("managedFields stripped though the spec names other ignore fields")
	}
	rule := o.Raw["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)
	if _, has := rule["host"]; has {
		t.Error("spec.rules[0].host not stripped")
	}
}

func TestAdmitFieldSelector(t *testing.T) {
	b := newBuilder(t, "")
	tests := []struct {
		name   string
		raw    map[string]any
		wantOK bool
	}{
		{"matching class", ingress(t, "prod", "web", "haproxy"), true},
		{"other class", ingress(t, "prod", "web", "nginx"), false},
		{"no class", decode(t, `{"metadata":{"namespace":"prod","name":"x"},"spec":{}}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok, err := b.Admit("ingresses", tt.raw)
			if err != nil {
				t.Fatalf("Admit: %v", err)
			}
			if ok != tt.wantOK {
				t.Fatalf("Admit ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok && (o.Name != "" || o.Raw != nil || o.TypedValue().IsValid()) {
				t.Errorf("rejected object is not zero: %+v", o)
			}
		})
	}
	// Services have no selector: everything passes.
	if _, ok, err := b.Admit("services", decode(t, `{"metadata":{"namespace":"a","name":"b"}}`)); !ok || err != nil {
		t.Errorf("service Admit = %v, %v; want admitted", ok, err)
	}
}

func TestAdmitSelectorSeesStrippedObject(t *testing.T) {
	// Ignored fields are removed before the selector runs.
	s := spec("")
	w := s.WatchedResources["ingresses"]
	w.FieldSelector = "metadata.labels.app="
	s.WatchedResources["ingresses"] = w
	s.WatchedResourcesIgnoreFields = []string{"metadata.labels.app"}
	b, err := NewBuilder(s, registry(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.Admit("ingresses", ingress(t, "prod", "web", "haproxy")); !ok || err != nil {
		t.Errorf("Admit = %v, %v; want admitted (label stripped before selecting)", ok, err)
	}
}

func TestAdmitTyped(t *testing.T) {
	b := newBuilder(t, v1alpha1.AccessTyped)
	o, ok, err := b.Admit("ingresses", ingress(t, "prod", "web", "haproxy"))
	if err != nil || !ok {
		t.Fatalf("Admit = %v, %v", ok, err)
	}
	if !o.TypedValue().IsValid() {
		t.Fatal("typed access gave no typed value")
	}
	if o.TypedValue().Kind() != reflect.Pointer {
		t.Fatalf("Typed is a %v, want a pointer", o.TypedValue().Kind())
	}
	r, _ := b.Resource("ingresses")
	if o.TypedValue().Type().Elem() != r.Type.Go {
		t.Errorf("Typed is %v, want *%v", o.TypedValue().Type(), r.Type.Go)
	}
	spec := o.TypedValue().Elem().FieldByName("Spec")
	if !spec.IsValid() {
		t.Fatalf("typed ingress has no Spec field: %v", o.TypedValue().Elem().Type())
	}
	class := reflect.Indirect(reflect.Indirect(spec).FieldByName("IngressClassName"))
	if !class.IsValid() || class.Kind() != reflect.String || class.String() != "haproxy" {
		t.Errorf("Spec.IngressClassName = %v, want haproxy", class)
	}
	// deeper: rules[0].http.paths[0].backend.service.port.number
	rules := reflect.Indirect(spec).FieldByName("Rules")
	if rules.Len() != 1 {
		t.Fatalf("Spec.Rules has %d elements, want 1", rules.Len())
	}
	host := reflect.Indirect(reflect.Indirect(rules.Index(0)).FieldByName("Host"))
	if host.String() != "a.example.com" {
		t.Errorf("Spec.Rules[0].Host = %v", host)
	}
	// Stripped fields are absent from the typed value as well.
	meta := reflect.Indirect(o.TypedValue().Elem().FieldByName("Metadata"))
	if meta.IsValid() {
		if mf := meta.FieldByName("ManagedFields"); mf.IsValid() && mf.Len() != 0 {
			t.Errorf("typed metadata still holds managedFields: %v", mf)
		}
	}
}

func TestAdmitWrongType(t *testing.T) {
	b := newBuilder(t, v1alpha1.AccessTyped)
	raw := ingress(t, "prod", "web", "haproxy")
	raw["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["host"] = 42.0
	o, ok, err := b.Admit("ingresses", raw)
	if err == nil {
		t.Fatalf("Admit of a wrong-typed field succeeded: %+v", o)
	}
	if ok || o.TypedValue().IsValid() {
		t.Errorf("Admit returned ok=%v typed=%v with an error", ok, o.TypedValue().IsValid())
	}
	for _, want := range []string{"ingresses", "prod/web", "spec.rules[0].host"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	var fe *schema.FieldError
	if !errors.As(err, &fe) || fe.Path != "spec.rules[0].host" {
		t.Errorf("error does not wrap a *schema.FieldError at spec.rules[0].host: %v", err)
	}

	// The same object is fine untyped.
	u := newBuilder(t, v1alpha1.AccessUntyped)
	raw = ingress(t, "prod", "web", "haproxy")
	raw["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["host"] = 42.0
	if _, ok, err := u.Admit("ingresses", raw); !ok || err != nil {
		t.Errorf("untyped Admit = %v, %v; want admitted", ok, err)
	}
}

func TestAdmitUntyped(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    func(t *testing.T) *Builder
	}{
		{"untyped access", func(t *testing.T) *Builder { return newBuilder(t, v1alpha1.AccessUntyped) }},
		{"nil registry", func(t *testing.T) *Builder {
			b, err := NewBuilder(spec(""), nil)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b(t)
			o, ok, err := b.Admit("ingresses", ingress(t, "prod", "web", "haproxy"))
			if err != nil || !ok {
				t.Fatalf("Admit = %v, %v", ok, err)
			}
			if o.TypedValue().IsValid() {
				t.Errorf("untyped Admit gave a typed value %v", o.TypedValue().Type())
			}
			for name, typ := range b.Types() {
				if typ != nil {
					t.Errorf("Types()[%s] = %v, want nil", name, typ)
				}
			}
			if st := b.NewStore("ingresses", nil); st.Type != nil {
				t.Errorf("store type = %v, want nil", st.Type)
			}
		})
	}
}

func TestAdmitNoSchemaResource(t *testing.T) {
	b := newBuilder(t, v1alpha1.AccessTyped)
	o, ok, err := b.Admit("widgets", decode(t, `{"metadata":{"name":"w"},"spec":{"size":"anything"}}`))
	if err != nil || !ok {
		t.Fatalf("Admit = %v, %v", ok, err)
	}
	if o.TypedValue().IsValid() {
		t.Error("resource without a schema got a typed value")
	}
	if o.Key() != "w" {
		t.Errorf("cluster-scoped key = %q, want w", o.Key())
	}
}

func TestAdmitUnknownResource(t *testing.T) {
	b := newBuilder(t, "")
	if _, ok, err := b.Admit("pods", decode(t, `{"metadata":{"name":"p"}}`)); err == nil || ok || !strings.Contains(err.Error(), `"pods"`) {
		t.Errorf("Admit(pods) = %v, %v; want an error naming pods", ok, err)
	}
}

func TestTypes(t *testing.T) {
	b := newBuilder(t, v1alpha1.AccessTyped)
	reg := registry(t)
	ing, _ := reg.ForResource("networking.k8s.io/v1", "ingresses")
	svc, _ := reg.ForResource("v1", "services")
	want := map[string]reflect.Type{"ingresses": ing.Go, "services": svc.Go, "widgets": nil}
	got := b.Types()
	if len(got) != len(want) {
		t.Fatalf("Types() = %v, want %v", got, want)
	}
	for name, w := range want {
		g, present := got[name]
		if !present {
			t.Errorf("Types() lacks %s", name)
			continue
		}
		if g != w {
			t.Errorf("Types()[%s] = %v, want %v", name, g, w)
		}
		if g != nil && g.Kind() != reflect.Struct {
			t.Errorf("Types()[%s] is a %v, want a struct", name, g.Kind())
		}
	}
	if !slices.Equal(b.Names(), []string{"ingresses", "services", "widgets"}) {
		t.Errorf("Names() = %v", b.Names())
	}
}

func TestNewBuilderErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *v1alpha1.HAProxyTemplateConfigSpec)
		want   []string
	}{
		{
			name:   "bad ignore field",
			mutate: func(s *v1alpha1.HAProxyTemplateConfigSpec) { s.WatchedResourcesIgnoreFields = []string{"metadata[x"} },
			want:   []string{"watchedResourcesIgnoreFields", "unclosed"},
		},
		{
			name: "bad indexBy",
			mutate: func(s *v1alpha1.HAProxyTemplateConfigSpec) {
				w := s.WatchedResources["services"]
				w.IndexBy = []string{"metadata.name", "spec[bad]"}
				s.WatchedResources["services"] = w
			},
			want: []string{"watchedResources[services].indexBy", "spec[bad]"},
		},
		{
			name: "bad field selector",
			mutate: func(s *v1alpha1.HAProxyTemplateConfigSpec) {
				w := s.WatchedResources["services"]
				w.FieldSelector = "spec.type"
				s.WatchedResources["services"] = w
			},
			want: []string{"watchedResources[services].fieldSelector", "path=value"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spec("")
			tt.mutate(s)
			b, err := NewBuilder(s, registry(t))
			if err == nil {
				t.Fatalf("NewBuilder succeeded: %v", b.Names())
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestSnapshot(t *testing.T) {
	b := newBuilder(t, v1alpha1.AccessTyped)

	t.Run("empty store for every watched resource", func(t *testing.T) {
		for _, raw := range []map[string][]map[string]any{nil, {}, {"services": nil}} {
			snap, err := b.Snapshot(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := snap.Names(); !slices.Equal(got, []string{"ingresses", "services", "widgets"}) {
				t.Fatalf("Names() = %v", got)
			}
			for _, n := range snap.Names() {
				st := snap.Stores[n]
				if st == nil || st.Len() != 0 || st.Name != n {
					t.Errorf("store %s = %+v, want empty and named", n, st)
				}
			}
		}
	})

	t.Run("admits, filters, sorts and indexes", func(t *testing.T) {
		snap, err := b.Snapshot(map[string][]map[string]any{
			"ingresses": {
				ingress(t, "prod", "web", "haproxy"),
				ingress(t, "dev", "web", "haproxy"),
				ingress(t, "prod", "other", "nginx"),
				ingress(t, "prod", "api", "haproxy"),
			},
			"services": {decode(t, `{"metadata":{"namespace":"prod","name":"web"},"spec":{"ports":[{"port":80}]}}`)},
		})
		if err != nil {
			t.Fatal(err)
		}
		ing := snap.Stores["ingresses"]
		var keys []string
		for _, o := range ing.List() {
			keys = append(keys, o.Key())
			if !o.TypedValue().IsValid() {
				t.Errorf("%s has no typed value", o.Key())
			}
		}
		if want := []string{"dev/web", "prod/api", "prod/web"}; !slices.Equal(keys, want) {
			t.Errorf("ingresses = %v, want %v", keys, want)
		}
		if ing.Type == nil || ing.Type.Kind() != reflect.Struct {
			t.Errorf("ingress store type = %v", ing.Type)
		}
		got, err := ing.Fetch("prod")
		if err != nil || len(got) != 2 {
			t.Errorf("Fetch(prod) = %d objects, %v; want 2", len(got), err)
		}
		o, ok, err := ing.GetSingle("prod", "web")
		if err != nil || !ok || o.Key() != "prod/web" {
			t.Errorf("GetSingle(prod, web) = %q, %v, %v", o.Key(), ok, err)
		}
		if snap.Stores["services"].Len() != 1 || snap.Stores["widgets"].Len() != 0 {
			t.Errorf("services %d, widgets %d; want 1, 0", snap.Stores["services"].Len(), snap.Stores["widgets"].Len())
		}
	})

	t.Run("unknown resource", func(t *testing.T) {
		_, err := b.Snapshot(map[string][]map[string]any{
			"services": nil,
			"gizmos":   {decode(t, `{"metadata":{"name":"g"}}`)},
		})
		if err == nil || !strings.Contains(err.Error(), `"gizmos"`) {
			t.Errorf("Snapshot with an unknown resource: err = %v, want one naming gizmos", err)
		}
	})

	t.Run("conversion error", func(t *testing.T) {
		raw := ingress(t, "prod", "bad", "haproxy")
		raw["spec"].(map[string]any)["rules"] = "not a list"
		_, err := b.Snapshot(map[string][]map[string]any{"ingresses": {raw}})
		if err == nil || !strings.Contains(err.Error(), "prod/bad") || !strings.Contains(err.Error(), "spec.rules") {
			t.Errorf("Snapshot error = %v, want one naming prod/bad and spec.rules", err)
		}
	})
}

// Prepare sees every object admitted for templates, with its resource's apiVersion
// and plural, and shares its Forms with the object Admit returns; not an object the
// field selector leaves out.
func TestAdmitPrepares(t *testing.T) {
	b := newBuilder(t, "")
	var seen []string
	b.Prepare = func(apiVersion, resources string, o snapshot.Object) {
		seen = append(seen, apiVersion+" "+resources+" "+o.Key())
		o.Forms.Put("kind", "form")
	}
	o, ok, err := b.Admit("ingresses", ingress(t, "prod", "web", "haproxy"))
	if err != nil || !ok {
		t.Fatalf("Admit = %v, %v", ok, err)
	}
	if v, _ := o.Forms.Get("kind"); v != "form" {
		t.Errorf("the admitted object's forms hold %v", v)
	}
	if _, ok, _ := b.Admit("ingresses", ingress(t, "prod", "other", "nginx")); ok {
		t.Fatal("an Ingress of another class was admitted")
	}
	if want := []string{"networking.k8s.io/v1 ingresses prod/web"}; !slices.Equal(seen, want) {
		t.Errorf("Prepare saw %q, want %q", seen, want)
	}
}
