package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// groupVersion is one apiserver OpenAPI v3 document: a group/version and the kinds
// HAPTIC bundles from it.
type groupVersion struct {
	file           string // named after the apiserver path it mirrors
	group, version string
	kinds          []any // zero values of the top-level Go types
}

var builtins = []groupVersion{
	{file: "openapi-api-v1.json", group: "", version: "v1", kinds: []any{
		corev1.ConfigMap{}, corev1.Endpoints{}, corev1.Namespace{}, corev1.Pod{}, corev1.Secret{}, corev1.Service{},
	}},
	{file: "openapi-apis-discovery.k8s.io-v1.json", group: "discovery.k8s.io", version: "v1", kinds: []any{
		discoveryv1.EndpointSlice{},
	}},
	{file: "openapi-apis-networking.k8s.io-v1.json", group: "networking.k8s.io", version: "v1", kinds: []any{
		networkingv1.Ingress{}, networkingv1.IngressClass{},
	}},
}

// special lists types whose JSON form is not what their Go structure says (they
// have custom marshalers); the schemas follow the apiserver's (Quantity is
// string|number there), with x-kubernetes-int-or-string added to IntOrString.
var special = map[reflect.Type]map[string]any{
	reflect.TypeFor[intstr.IntOrString]():   {"type": "string", "format": "int-or-string", "x-kubernetes-int-or-string": true},
	reflect.TypeFor[resource.Quantity]():    {"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}},
	reflect.TypeFor[metav1.Time]():          {"type": "string", "format": "date-time"},
	reflect.TypeFor[metav1.MicroTime]():     {"type": "string", "format": "date-time"},
	reflect.TypeFor[metav1.Duration]():      {"type": "string"},
	reflect.TypeFor[metav1.FieldsV1]():      {"type": "object"},
	reflect.TypeFor[runtime.RawExtension](): {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
}

var (
	marshalerType = reflect.TypeFor[json.Marshaler]()
	byteSliceType = reflect.TypeFor[[]byte]()
)

// kubernetesDocs adds one OpenAPI document per group/version, plus meta/objectmeta.json.
func kubernetesDocs(files map[string][]byte) error {
	version := moduleVersion("k8s.io/api")
	for _, gv := range builtins {
		g := &openAPIGen{schemas: map[string]map[string]any{}}
		for _, k := range gv.kinds {
			t := reflect.TypeOf(k)
			if err := g.define(t); err != nil {
				return fmt.Errorf("%s: %w", t, err)
			}
			g.schemas[schemaName(t)]["x-kubernetes-group-version-kind"] = []any{
				map[string]any{"group": gv.group, "version": gv.version, "kind": t.Name()},
			}
		}
		b, err := marshalJSON(document(version, g.schemas))
		if err != nil {
			return fmt.Errorf("%s: %w", gv.file, err)
		}
		files[gv.file] = b
	}
	g := &openAPIGen{schemas: map[string]map[string]any{}}
	if err := g.define(reflect.TypeFor[metav1.ObjectMeta]()); err != nil {
		return fmt.Errorf("ObjectMeta: %w", err)
	}
	b, err := marshalJSON(document(version, g.schemas))
	if err != nil {
		return fmt.Errorf("objectmeta: %w", err)
	}
	files["meta/objectmeta.json"] = b
	return nil
}

func document(version string, schemas map[string]map[string]any) map[string]any {
	return map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]any{"title": "Kubernetes (generated from k8s.io/api by tools/genschemas)", "version": version},
		"components": map[string]any{"schemas": schemas},
	}
}

func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "unknown"
}

// openAPIGen collects the named schemas one document needs.
type openAPIGen struct {
	schemas map[string]map[string]any
}

// schemaName follows the apiserver: the package path with its domain reversed,
// dots for slashes, then the type name (io.k8s.api.core.v1.Service).
func schemaName(t reflect.Type) string {
	parts := strings.Split(t.PkgPath(), "/")
	domain := strings.Split(parts[0], ".")
	for i, j := 0, len(domain)-1; i < j; i, j = i+1, j-1 {
		domain[i], domain[j] = domain[j], domain[i]
	}
	return strings.Join(append(domain, parts[1:]...), ".") + "." + t.Name()
}

func ref(t reflect.Type) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + schemaName(t)}
}

// define adds the named schema of struct (or special) type t and everything it uses.
func (g *openAPIGen) define(t reflect.Type) error {
	name := schemaName(t)
	if _, done := g.schemas[name]; done {
		return nil
	}
	if s, ok := special[t]; ok {
		g.schemas[name] = copyMap(s)
		return nil
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return fmt.Errorf("%s has a custom JSON form: add it to special", t)
	}
	s := map[string]any{"type": "object"}
	g.schemas[name] = s // placeholder first: recursive types end in a $ref
	props := map[string]any{}
	if err := g.addFields(t, props); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(props) > 0 {
		s["properties"] = props
	}
	return nil
}

// addFields adds t's JSON fields to props, flattening embedded and ",inline" structs
// the way encoding/json does.
func (g *openAPIGen) addFields(t reflect.Type, props map[string]any) error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		inline := strings.Contains(","+opts+",", ",inline,") || (f.Anonymous && tag == "")
		if inline && ft.Kind() == reflect.Struct {
			if err := g.addFields(ft, props); err != nil {
				return err
			}
			continue
		}
		name := tag
		if name == "" {
			name = f.Name
		}
		s, err := g.schemaFor(f.Type)
		if err != nil {
			return fmt.Errorf("field %s: %w", name, err)
		}
		props[name] = s
	}
	return nil
}

// schemaFor returns the inline schema of a field of type t; named structs become
// $refs (wrapped in allOf with an empty default when the field is not a pointer,
// as the apiserver publishes them).
func (g *openAPIGen) schemaFor(t reflect.Type) (map[string]any, error) {
	if t == byteSliceType {
		return map[string]any{"type": "string", "format": "byte"}, nil
	}
	if _, ok := special[t]; ok {
		if err := g.define(t); err != nil {
			return nil, err
		}
		return ref(t), nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct && t.Elem().Name() != "" {
			if err := g.define(t.Elem()); err != nil {
				return nil, err
			}
			return ref(t.Elem()), nil
		}
		return g.schemaFor(t.Elem())
	case reflect.Struct:
		if t.Name() == "" {
			props := map[string]any{}
			if err := g.addFields(t, props); err != nil {
				return nil, err
			}
			return map[string]any{"type": "object", "properties": props}, nil
		}
		if err := g.define(t); err != nil {
			return nil, err
		}
		return map[string]any{"allOf": []any{ref(t)}, "default": map[string]any{}}, nil
	case reflect.Slice, reflect.Array:
		items, err := g.schemaFor(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key %s is not a string", t.Key())
		}
		vals, err := g.schemaFor(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": vals}, nil
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int32, reflect.Int16, reflect.Int8, reflect.Uint16, reflect.Uint8:
		return map[string]any{"type": "integer", "format": "int32"}, nil
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}, nil
	case reflect.Interface:
		return map[string]any{"x-kubernetes-preserve-unknown-fields": true}, nil
	}
	return nil, fmt.Errorf("unsupported Go type %s", t)
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
