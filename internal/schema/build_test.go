package schema

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// thingType loads an OpenAPI document with one kind, Thing, whose properties are
// props (JSON), plus the named schemas in extra (JSON object members, may be empty).
func thingType(t *testing.T, props, extra string) reflect.Type {
	t.Helper()
	if extra != "" {
		extra = "," + extra
	}
	doc := fmt.Sprintf(`{"components":{"schemas":{"com.example.v1.Thing":{"type":"object","properties":%s,
		"x-kubernetes-group-version-kind":[{"group":"example.com","version":"v1","kind":"Thing"}]}%s}}}`, props, extra)
	r := NewRegistry()
	if err := r.LoadDocument("thing.json", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	typ, ok := r.ForKind("example.com/v1", "Thing")
	if !ok {
		t.Fatal("Thing not registered")
	}
	return typ.Go
}

func TestTypeMapping(t *testing.T) {
	const (
		anyT = "interface {}"
		objT = "map[string]interface {}"
		abT  = `*struct { A string "json:\"a\"" }`
	)
	extra := `"com.example.v1.AB":{"type":"object","properties":{"a":{"type":"string"}}},
		"com.example.v1.CD":{"type":"object","properties":{"c":{"type":"boolean"}}},
		"com.example.v1.Port":{"type":"string","x-kubernetes-int-or-string":true}`
	for _, tc := range []struct{ name, schema, want string }{
		{"string", `{"type":"string"}`, "string"},
		{"date-time", `{"type":"string","format":"date-time"}`, "string"},
		{"byte", `{"type":"string","format":"byte"}`, "string"},
		{"int32", `{"type":"integer","format":"int32"}`, "int"},
		{"int64", `{"type":"integer","format":"int64"}`, "int"},
		{"number", `{"type":"number","format":"double"}`, "float64"},
		{"boolean", `{"type":"boolean"}`, "bool"},
		{"nullable type list", `{"type":["string","null"]}`, "string"},
		{"int-or-string", `{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}`, "string"},
		{"int-or-string ref", `{"$ref":"#/components/schemas/com.example.v1.Port"}`, "string"},
		{"int-or-string format", `{"format":"int-or-string","oneOf":[{"type":"integer"},{"type":"string"}]}`, "string"},
		{"integer|string", `{"anyOf":[{"type":"integer"},{"type":"string"}]}`, "string"},
		{"string|number (Quantity)", `{"oneOf":[{"type":"string"},{"type":"number"}]}`, "string"},
		{"integer|number", `{"oneOf":[{"type":"integer"},{"type":"number"}]}`, "float64"},
		{"bool|string", `{"oneOf":[{"type":"boolean"},{"type":"string"}]}`, anyT},
		{"object|string", `{"oneOf":[{"type":"object"},{"type":"string"}]}`, anyT},
		{"validation-only oneOf", `{"type":"object","properties":{"a":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`, abT},
		{"allOf with own properties", `{"type":"object","properties":{"c":{"type":"boolean"}},"allOf":[{"$ref":"#/components/schemas/com.example.v1.AB"}]}`,
			`*struct { A string "json:\"a\""; C bool "json:\"c\"" }`},
		{"typed with validation-only allOf", `{"type":"string","allOf":[{"pattern":"^a"}]}`, "string"},
		{"string array", `{"type":"array","items":{"type":"string"}}`, "[]string"},
		{"object array", `{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}}`, "[]" + abT},
		{"array without items", `{"type":"array"}`, "[]interface {}"},
		{"array of arrays", `{"type":"array","items":{"type":"array","items":{"type":"integer"}}}`, "[][]int"},
		{"string map", `{"type":"object","additionalProperties":{"type":"string"}}`, "map[string]string"},
		{"object map", `{"type":"object","additionalProperties":{"$ref":"#/components/schemas/com.example.v1.AB"}}`, "map[string]" + abT},
		{"additionalProperties true", `{"type":"object","additionalProperties":true}`, objT},
		{"object without properties", `{"type":"object"}`, objT},
		{"preserve-unknown-fields", `{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"string"}}}`, objT},
		{"preserve-unknown untyped", `{"x-kubernetes-preserve-unknown-fields":true}`, anyT},
		{"no type", `{}`, anyT},
		{"nested object", `{"type":"object","properties":{"a":{"type":"string"}}}`, abT},
		{"untyped with properties", `{"properties":{"a":{"type":"string"}}}`, abT},
		{"$ref", `{"$ref":"#/components/schemas/com.example.v1.AB"}`, abT},
		{"allOf wrapper", `{"allOf":[{"$ref":"#/components/schemas/com.example.v1.AB"}],"default":{}}`, abT},
		{"allOf merge", `{"allOf":[{"$ref":"#/components/schemas/com.example.v1.AB"},{"$ref":"#/components/schemas/com.example.v1.CD"}]}`,
			`*struct { A string "json:\"a\""; C bool "json:\"c\"" }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := thingType(t, `{"f":`+tc.schema+`}`, extra)
			if st.NumField() != 1 {
				t.Fatalf("Thing has %d fields, want 1: %s", st.NumField(), st)
			}
			if got := st.Field(0).Type.String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestFieldNamingAndCollisions(t *testing.T) {
	st := thingType(t, `{"xFoo":{"type":"integer"},"x-foo":{"type":"string"},"XFoo":{"type":"boolean"},
		"kubernetes.io/x":{"type":"string"},"-":{"type":"string"},"ingressClassName":{"type":"string"}}`, "")
	// JSON-name order: "-" (no Go name), "XFoo", "ingressClassName", "kubernetes.io/x", "x-foo", "xFoo".
	want := []struct{ goName, jsonName, typ string }{
		{"XFoo", "XFoo", "bool"},
		{"IngressClassName", "ingressClassName", "string"},
		{"KubernetesIoX", "kubernetes.io/x", "string"},
	}
	if st.NumField() != len(want) {
		t.Fatalf("got %d fields, want %d: %s", st.NumField(), len(want), st)
	}
	for i, w := range want {
		f := st.Field(i)
		if f.Name != w.goName || f.Tag.Get("json") != w.jsonName || f.Type.String() != w.typ {
			t.Errorf("field %d = %s %s json:%q, want %s %s json:%q", i, f.Name, f.Type, f.Tag.Get("json"), w.goName, w.typ, w.jsonName)
		}
	}
	// Deterministic: the same schema always yields the identical type.
	if again := thingType(t, `{"XFoo":{"type":"boolean"},"x-foo":{"type":"string"},"xFoo":{"type":"integer"},
		"kubernetes.io/x":{"type":"string"},"-":{"type":"string"},"ingressClassName":{"type":"string"}}`, ""); again != st {
		t.Errorf("rebuilding gave a different type: %s vs %s", again, st)
	}
}

func TestRecursiveSchemaIsCut(t *testing.T) {
	r := NewRegistry()
	if err := r.LoadDir("testdata/schemas"); err != nil {
		t.Fatal(err)
	}
	gizmo, ok := r.ForKind("example.com/v1", "Gizmo")
	if !ok {
		t.Fatal("Gizmo not registered")
	}
	spec, _ := gizmo.Go.FieldByName("Spec")
	props := spec.Type.Elem()
	f, ok := props.FieldByName("Schema")
	if !ok {
		t.Fatalf("no Schema field in %s", props)
	}
	want := `*struct { Items map[string]interface {} "json:\"items\""; Properties map[string]map[string]interface {} "json:\"properties\""; Type string "json:\"type\"" }`
	if got := f.Type.String(); got != want {
		t.Errorf("recursive Props = %s\nwant %s", got, want)
	}
}

func TestDepthCap(t *testing.T) {
	const levels = 40
	s := `{"type":"string"}`
	for range levels {
		s = `{"type":"object","properties":{"a":` + s + `}}`
	}
	typ := thingType(t, `{"f":`+s+`}`, "")
	depth := 0
	for ft := typ.Field(0).Type; ft.Kind() == reflect.Pointer; ft = ft.Elem().Field(0).Type {
		depth++
		if last := ft.Elem().Field(0).Type; last.Kind() != reflect.Pointer && last.String() != "map[string]interface {}" {
			t.Fatalf("level %d ends in %s, want map[string]interface {}", depth, last)
		}
	}
	if depth != maxDepth {
		t.Errorf("got %d struct levels, want %d", depth, maxDepth)
	}
}

func TestSharedTypes(t *testing.T) {
	r := bundled(t)
	ing := mustType(t, r, "networking.k8s.io/v1", "ingresses")
	svc := mustType(t, r, "v1", "services")
	route := mustType(t, r, "gateway.networking.k8s.io/v1", "httproutes")
	meta := func(typ *Type) reflect.Type {
		f, ok := typ.Go.FieldByName("Metadata")
		if !ok {
			t.Fatalf("%s has no Metadata", typ.Kind)
		}
		return f.Type
	}
	if meta(ing) != meta(svc) || meta(ing) != meta(route) {
		t.Errorf("Metadata types differ:\n%s\n%s\n%s", meta(ing), meta(svc), meta(route))
	}
	if !strings.Contains(meta(route).String(), `Labels map[string]string "json:\"labels\""`) {
		t.Errorf("CRD metadata is not ObjectMeta: %s", meta(route))
	}
}
