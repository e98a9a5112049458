package schema

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
)

// maxDepth bounds how deeply nested a built type may get. Deeper schemas (and
// recursive ones, which Go types cannot express) become map[string]any there.
const maxDepth = 32

// codecKind says how a value of a built type is filled from decoded JSON/YAML.
type codecKind uint8

const (
	kString         codecKind = iota // string (also date-time, byte, …)
	kIntOrString                     // string; integers are formatted in decimal
	kNumberOrString                  // string; numbers are formatted in decimal (Quantity)
	kInt                             // int
	kFloat                           // float64
	kBool                            // bool
	kAny                             // any: the decoded value as is
	kFreeObject                      // map[string]any: the decoded object as is
	kStruct                          // *struct
	kSlice                           // []T
	kMap                             // map[string]T
)

var (
	typeString   = reflect.TypeFor[string]()
	typeInt      = reflect.TypeFor[int]()
	typeFloat    = reflect.TypeFor[float64]()
	typeBool     = reflect.TypeFor[bool]()
	typeAny      = reflect.TypeFor[any]()
	typeMapAny   = reflect.TypeFor[map[string]any]()
	typeSliceAny = reflect.TypeFor[[]any]()
)

// codec is the precomputed conversion plan for one Go type, built together with it
// so that conversion never looks at the schema again.
type codec struct {
	kind codecKind
	typ  reflect.Type // the Go type a value of this codec is stored as
	elem *codec       // kSlice, kMap: the element plan

	// kStruct only.
	structType reflect.Type      // typ.Elem()
	fields     map[string]*field // by JSON name
	sorted     []*field          // by JSON name: deterministic error reporting

	// kSlice of kStruct: elements share one backing array of structs.
	backing reflect.Type
}

type field struct {
	name  string // JSON name
	index int    // struct field index
	c     *codec
}

var (
	stringCodec      = &codec{kind: kString, typ: typeString}
	intOrStringCodec = &codec{kind: kIntOrString, typ: typeString}
	numOrStringCodec = &codec{kind: kNumberOrString, typ: typeString}
	intCodec         = &codec{kind: kInt, typ: typeInt}
	floatCodec       = &codec{kind: kFloat, typ: typeFloat}
	boolCodec        = &codec{kind: kBool, typ: typeBool}
	anyCodec         = &codec{kind: kAny, typ: typeAny}
	freeObjectCodec  = &codec{kind: kFreeObject, typ: typeMapAny}
	anySliceCodec    = &codec{kind: kSlice, typ: typeSliceAny, elem: anyCodec}
)

// builder turns schema nodes into Go types and their codecs. One builder serves one
// document; named ($ref'd) schemas are built once and reused, so every kind that
// refers to ObjectMeta gets the very same Go type (reflect.StructOf also returns
// identical types for identical field lists, which makes this hold across documents).
type builder struct {
	lookup func(name string) *node
	cache  map[string]*codec // named schemas whose type did not hit a cycle or the depth cap
	active map[string]bool   // named schemas on the current build path
}

func newBuilder(lookup func(string) *node) *builder {
	return &builder{lookup: lookup, cache: map[string]*codec{}, active: map[string]bool{}}
}

// build returns the codec for n. tainted reports that a cycle or the depth cap cut
// the type short somewhere below; such results depend on the path taken to reach
// them and are therefore not cached by name.
func (b *builder) build(n *node, depth int) (c *codec, tainted bool, err error) {
	if n == nil {
		return anyCodec, false, nil
	}
	if n.Ref != "" {
		return b.buildRef(refName(n.Ref), depth)
	}
	if depth > maxDepth {
		return freeFormFor(n), true, nil
	}
	if len(n.AllOf) > 0 {
		// The apiserver wraps $refs as {allOf: [{$ref}], default, description}.
		if len(n.AllOf) == 1 && n.Type == "" && len(n.Properties) == 0 {
			return b.build(n.AllOf[0], depth)
		}
		merged, err := b.mergeAllOf(n)
		if err != nil {
			return nil, false, err
		}
		return b.build(merged, depth)
	}
	if n.IntOrString || n.Format == "int-or-string" {
		return intOrStringCodec, false, nil
	}
	if n.Type == "" && len(n.Properties) == 0 {
		if c := b.scalarAlternatives(n); c != nil {
			return c, false, nil
		}
	}
	if n.PreserveUnknown {
		return freeFormFor(n), false, nil
	}
	switch n.Type {
	case "string":
		return stringCodec, false, nil
	case "integer":
		return intCodec, false, nil
	case "number":
		return floatCodec, false, nil
	case "boolean":
		return boolCodec, false, nil
	case "array":
		if n.Items == nil {
			return anySliceCodec, false, nil
		}
		elem, t, err := b.build(n.Items, depth+1)
		if err != nil {
			return nil, false, fmt.Errorf("items: %w", err)
		}
		return sliceCodec(elem), t, nil
	case "object", "":
		switch {
		case len(n.Properties) > 0:
			return b.buildStruct(n, depth)
		case n.AdditionalProperties != nil && n.AdditionalProperties.Schema != nil:
			elem, t, err := b.build(n.AdditionalProperties.Schema, depth+1)
			if err != nil {
				return nil, false, fmt.Errorf("additionalProperties: %w", err)
			}
			return mapCodec(elem), t, nil
		}
		return freeFormFor(n), false, nil
	}
	return nil, false, fmt.Errorf("unsupported type %q", n.Type)
}

// scalarAlternatives handles an untyped schema whose oneOf/anyOf lists scalar
// types only, as the apiserver publishes IntOrString (integer|string) and Quantity
// (string|number): a mix with string becomes a string, a single type that type.
// It returns nil when the alternatives are not all typed scalars.
func (b *builder) scalarAlternatives(n *node) *codec {
	alts := n.OneOf
	if len(alts) == 0 {
		alts = n.AnyOf
	}
	if len(alts) == 0 {
		return nil
	}
	var hasString, hasInt, hasNumber, hasBool bool
	for _, a := range alts {
		switch b.resolve(a).Type {
		case "string":
			hasString = true
		case "integer":
			hasInt = true
		case "number":
			hasNumber = true
		case "boolean":
			hasBool = true
		default:
			return nil
		}
	}
	switch {
	case hasBool && (hasString || hasInt || hasNumber):
		return nil // no common Go type: any
	case hasString && hasNumber:
		return numOrStringCodec
	case hasString && hasInt:
		return intOrStringCodec
	case hasString:
		return stringCodec
	case hasNumber:
		return floatCodec
	case hasInt:
		return intCodec
	}
	return boolCodec
}

// freeFormFor is the type used where the schema gives no structure: a JSON object
// becomes map[string]any, anything of unknown shape any.
func freeFormFor(n *node) *codec {
	switch {
	case n.Type == "object" || len(n.Properties) > 0 || n.AdditionalProperties != nil:
		return freeObjectCodec
	case n.Type == "array":
		return anySliceCodec
	}
	return anyCodec
}

func (b *builder) buildRef(name string, depth int) (*codec, bool, error) {
	if c, ok := b.cache[name]; ok {
		return c, false, nil
	}
	target := b.lookup(name)
	if target == nil {
		return nil, false, fmt.Errorf("unresolved $ref %q", name)
	}
	if b.active[name] || depth > maxDepth {
		// A Go type cannot contain itself by value; cut the cycle with a free form.
		return freeFormFor(b.resolve(target)), true, nil
	}
	b.active[name] = true
	c, tainted, err := b.build(target, depth)
	delete(b.active, name)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	if !tainted {
		b.cache[name] = c
	}
	return c, tainted, nil
}

// resolve follows $ref and single-element allOf wrappers (bounded, for odd documents).
func (b *builder) resolve(n *node) *node {
	for range maxDepth {
		switch {
		case n == nil:
			return &node{}
		case n.Ref != "":
			n = b.lookup(refName(n.Ref))
		case len(n.AllOf) == 1 && len(n.Properties) == 0:
			n = n.AllOf[0]
		default:
			return n
		}
	}
	return &node{}
}

// mergeAllOf folds a node and its allOf parts into one node with their combined
// properties; the node's own settings come first.
func (b *builder) mergeAllOf(n *node) (*node, error) {
	merged := *n
	merged.AllOf = nil
	merged.Properties = make(map[string]*node, len(n.Properties))
	for k, v := range n.Properties {
		merged.Properties[k] = v
	}
	for i, part := range n.AllOf {
		if part != nil && part.Ref != "" && b.lookup(refName(part.Ref)) == nil {
			return nil, fmt.Errorf("allOf[%d]: unresolved $ref %q", i, refName(part.Ref))
		}
		p := b.resolve(part)
		if merged.Type == "" {
			merged.Type = p.Type
		}
		if merged.Format == "" {
			merged.Format = p.Format
		}
		merged.IntOrString = merged.IntOrString || p.IntOrString
		merged.PreserveUnknown = merged.PreserveUnknown || p.PreserveUnknown
		if merged.Items == nil {
			merged.Items = p.Items
		}
		if merged.AdditionalProperties == nil {
			merged.AdditionalProperties = p.AdditionalProperties
		}
		for k, v := range p.Properties {
			if _, dup := merged.Properties[k]; !dup {
				merged.Properties[k] = v
			}
		}
	}
	if len(merged.Properties) == 0 {
		merged.Properties = nil
	}
	return &merged, nil
}

// buildStruct makes a pointer-to-struct type with one exported field per property,
// in JSON-name order. When two JSON names map to the same Go name the first in that
// order wins and the others are not reachable from templates (they are dropped).
func (b *builder) buildStruct(n *node, depth int) (*codec, bool, error) {
	names := make([]string, 0, len(n.Properties))
	for name := range n.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	var (
		sfields []reflect.StructField
		fields  []*field
		seen    = map[string]bool{}
		tainted bool
	)
	for _, name := range names {
		goName := FieldName(name)
		if goName == "" || seen[goName] {
			continue
		}
		seen[goName] = true
		c, t, err := b.build(n.Properties[name], depth+1)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", name, err)
		}
		tainted = tainted || t
		fields = append(fields, &field{name: name, index: len(sfields), c: c})
		sfields = append(sfields, reflect.StructField{
			Name: goName,
			Type: c.typ,
			Tag:  reflect.StructTag(`json:` + strconv.Quote(name)),
		})
	}
	st, err := structOf(sfields)
	if err != nil {
		return nil, false, err
	}
	c := &codec{kind: kStruct, typ: reflect.PointerTo(st), structType: st,
		fields: make(map[string]*field, len(fields)), sorted: fields}
	for _, f := range fields {
		c.fields[f.name] = f
	}
	return c, tainted, nil
}

// structOf turns reflect.StructOf's panics into errors: schemas come from users'
// CRDs and must not crash the controller.
func structOf(fields []reflect.StructField) (t reflect.Type, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("build struct type: %v", r)
		}
	}()
	return reflect.StructOf(fields), nil
}

func sliceCodec(elem *codec) *codec {
	c := &codec{kind: kSlice, typ: reflect.SliceOf(elem.typ), elem: elem}
	if elem.kind == kStruct {
		c.backing = reflect.SliceOf(elem.structType)
	}
	return c
}

func mapCodec(elem *codec) *codec {
	return &codec{kind: kMap, typ: reflect.MapOf(typeString, elem.typ), elem: elem}
}
