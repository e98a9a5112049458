package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func widgetType(t *testing.T) *Type {
	t.Helper()
	r := NewRegistry()
	if err := r.LoadDir("testdata/schemas"); err != nil {
		t.Fatal(err)
	}
	return mustType(t, r, "example.com/v1", "widgets")
}

func TestConvertValues(t *testing.T) {
	typ := widgetType(t)
	obj := map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "w", "labels": map[string]any{"a": "b"}, "unknownMeta": 1},
		"spec": map[string]any{
			"size":     float64(3), // as encoding/json decodes numbers
			"ratio":    int64(2),   // as YAML decoders decode integers
			"enabled":  true,
			"port":     float64(8080),
			"config":   map[string]any{"free": []any{"form", 1.0}},
			"tags":     []any{"x", nil, "z"},
			"limits":   map[string]any{"cpu": "1", "mem": nil},
			"backends": []any{map[string]any{"name": "a", "weight": 1}, nil, map[string]any{"name": "c"}},
			"unknown":  "dropped",
		},
		"status": nil,
	}
	if err := typ.Check(obj); err != nil {
		t.Fatalf("Check of a valid object: %v", err)
	}
	v, err := typ.Convert(obj)
	if err != nil {
		t.Fatal(err)
	}
	if v.Type() != reflect.PointerTo(typ.Go) {
		t.Fatalf("Convert returned %s, want *%s", v.Type(), typ.Go)
	}
	for _, tc := range []struct {
		path []any
		want any
	}{
		{[]any{"Kind"}, "Widget"},
		{[]any{"Metadata", "Name"}, "w"},
		{[]any{"Metadata", "Labels", "[a"}, "b"},
		{[]any{"Metadata", "Namespace"}, ""},
		{[]any{"Spec", "Size"}, 3},
		{[]any{"Spec", "Ratio"}, 2.0},
		{[]any{"Spec", "Enabled"}, true},
		{[]any{"Spec", "Port"}, "8080"},
		{[]any{"Spec", "Tags"}, []string{"x", "", "z"}},
		{[]any{"Spec", "Limits"}, map[string]string{"cpu": "1", "mem": ""}},
		{[]any{"Spec", "Config", "[free"}, []any{"form", 1.0}},
		{[]any{"Spec", "Backends", 0, "Name"}, "a"},
		{[]any{"Spec", "Backends", 0, "Weight"}, 1},
		{[]any{"Spec", "Backends", 2, "Weight"}, 0},
	} {
		if got := get(t, v, tc.path...).Interface(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v = %#v, want %#v", tc.path, got, tc.want)
		}
	}
	if !get(t, v, "Spec", "Backends", 1).IsNil() {
		t.Error("null array element should be a nil pointer")
	}
	if !get(t, v, "Status").IsNil() {
		t.Error("null status should be nil")
	}
	if _, ok := typ.Go.FieldByName("Unknown"); ok {
		t.Error("unknown field became part of the type")
	}

	// Missing parts stay zero: nil pointers, nil slices and maps.
	v, err = typ.Convert(map[string]any{"kind": "Widget"})
	if err != nil {
		t.Fatal(err)
	}
	if !get(t, v, "Spec").IsNil() || !get(t, v, "Metadata").IsNil() {
		t.Error("absent objects should be nil")
	}
	v, err = typ.Convert(map[string]any{"spec": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !get(t, v, "Spec", "Tags").IsNil() || !get(t, v, "Spec", "Limits").IsNil() || get(t, v, "Spec", "Port").String() != "" {
		t.Error("absent slices, maps and strings should be zero")
	}
}

func TestConvertIntOrString(t *testing.T) {
	typ := widgetType(t)
	for _, tc := range []struct {
		in   any
		want string
	}{
		{"http", "http"},
		{"8080", "8080"},
		{float64(443), "443"},
		{int(80), "80"},
		{int64(-1), "-1"},
		{json.Number("9000"), "9000"},
	} {
		v, err := typ.Convert(map[string]any{"spec": map[string]any{"port": tc.in}})
		if err != nil {
			t.Fatalf("%#v: %v", tc.in, err)
		}
		if got := get(t, v, "Spec", "Port").String(); got != tc.want {
			t.Errorf("port %#v = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestConvertQuantity(t *testing.T) {
	r := NewRegistry()
	if err := r.LoadDir("testdata/schemas"); err != nil {
		t.Fatal(err)
	}
	typ := mustType(t, r, "example.com/v1", "gizmos")
	limits := map[string]any{"cpu": 0.5, "memory": "128Mi", "pods": int64(110), "gpu": float64(2)}
	v, err := typ.Convert(map[string]any{"spec": map[string]any{"limits": limits, "port": 8080.0}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cpu": "0.5", "memory": "128Mi", "pods": "110", "gpu": "2"}
	if got := get(t, v, "Spec", "Limits").Interface(); !reflect.DeepEqual(got, want) {
		t.Errorf("limits = %#v, want %#v", got, want)
	}
	if got := get(t, v, "Spec", "Port").String(); got != "8080" {
		t.Errorf("port = %q", got)
	}
	_, err = typ.Convert(map[string]any{"spec": map[string]any{"limits": map[string]any{"cpu": true}}})
	if err == nil || !strings.HasSuffix(err.Error(), `spec.limits['cpu']: want number or string, got bool true`) {
		t.Errorf("got %v", err)
	}
}

func TestConvertErrors(t *testing.T) {
	typ := widgetType(t)
	for _, tc := range []struct {
		name string
		spec any
		want string
	}{
		{"string for integer", map[string]any{"size": "x"}, `spec.size: want integer, got string "x"`},
		{"fraction for integer", map[string]any{"backends": []any{map[string]any{}, map[string]any{"weight": 1.5}}},
			`spec.backends[1].weight: want integer, got number 1.5`},
		{"number in string map", map[string]any{"limits": map[string]any{"cpu": 1}}, `spec.limits['cpu']: want string, got number 1`},
		{"string in string list", map[string]any{"tags": []any{"a", 7.0}}, `spec.tags[1]: want string, got number 7`},
		{"scalar for object", "str", `spec: want object, got string "str"`},
		{"scalar for list", map[string]any{"tags": "a"}, `spec.tags: want array, got string "a"`},
		{"scalar for list element object", map[string]any{"backends": []any{"a"}}, `spec.backends[0]: want object, got string "a"`},
		{"string for boolean", map[string]any{"enabled": "yes"}, `spec.enabled: want boolean, got string "yes"`},
		{"bool for int-or-string", map[string]any{"port": true}, `spec.port: want integer or string, got bool true`},
		{"string for number", map[string]any{"ratio": "1.5"}, `spec.ratio: want number, got string "1.5"`},
		{"list for free-form object", map[string]any{"config": []any{}}, `spec.config: want object, got array`},
		// Several bad fields: the first in JSON-name order is reported, every time.
		{"first error wins", map[string]any{"tags": 1.0, "size": "x", "ratio": "y", "enabled": 0.0},
			`spec.enabled: want boolean, got number 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // map order is random; the reported error must not be
				_, err := typ.Convert(map[string]any{"spec": tc.spec})
				var fe *FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("got %v, want a *FieldError", err)
				}
				if fe.Error() != tc.want {
					t.Fatalf("got %q, want %q", fe.Error(), tc.want)
				}
				if !strings.HasPrefix(err.Error(), "convert example.com/v1 Widget: ") {
					t.Fatalf("error lacks context: %v", err)
				}
				if cerr := typ.Check(map[string]any{"spec": tc.spec}); fmt.Sprint(cerr) != err.Error() {
					t.Fatalf("Check: %v, Convert: %v", cerr, err)
				}
			}
		})
	}
}

func TestConvertIngressPortError(t *testing.T) {
	ing := mustType(t, bundled(t), "networking.k8s.io/v1", "ingresses")
	obj := loadYAML(t, "testdata/ingress.yaml")
	paths := obj["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["http"].(map[string]any)["paths"].([]any)
	paths[1].(map[string]any)["backend"].(map[string]any)["service"].(map[string]any)["port"] = map[string]any{"number": "x"}
	_, err := ing.Convert(obj)
	want := `convert networking.k8s.io/v1 Ingress: spec.rules[0].http.paths[1].backend.service.port.number: want integer, got string "x"`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if err := ing.Check(obj); err == nil || err.Error() != want {
		t.Fatalf("Check: got %v\nwant %s", err, want)
	}
}
