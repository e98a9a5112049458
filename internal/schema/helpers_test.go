package schema

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// get walks struct fields, slice indexes (int) and map keys (string prefixed with
// '[') through pointers, failing the test on a nil pointer or missing field.
func get(t testing.TB, v reflect.Value, path ...any) reflect.Value {
	t.Helper()
	for _, p := range path {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				t.Fatalf("nil before %v in %v", p, path)
			}
			v = v.Elem()
		}
		switch p := p.(type) {
		case int:
			if p >= v.Len() {
				t.Fatalf("index %d out of range (len %d) in %v", p, v.Len(), path)
			}
			v = v.Index(p)
		case string:
			if len(p) > 0 && p[0] == '[' {
				v = v.MapIndex(reflect.ValueOf(p[1:]))
				if !v.IsValid() {
					t.Fatalf("no map key %q in %v", p[1:], path)
				}
				continue
			}
			f := v.FieldByName(p)
			if !f.IsValid() {
				t.Fatalf("no field %s in %v (type %s)", p, path, v.Type())
			}
			v = f
		}
	}
	return v
}

func loadYAML(t testing.TB, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

// viaJSON re-decodes obj the way objects arrive from the apiserver (numbers as float64).
func viaJSON(t testing.TB, obj map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func bundled(t testing.TB) *Registry {
	t.Helper()
	r, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustType(t testing.TB, r *Registry, apiVersion, resource string) *Type {
	t.Helper()
	typ, ok := r.ForResource(apiVersion, resource)
	if !ok {
		t.Fatalf("no type for %s %s", apiVersion, resource)
	}
	return typ
}
