package schema

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// FieldError reports a value whose JSON type does not match the schema.
// Path uses the fieldpath dialect: spec.rules[0].http.paths[1].backend.service.port.number.
type FieldError struct {
	Path string
	Msg  string

	rev []string // path segments, innermost first, while the error bubbles up
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// at records that the error happened below segment (".name", "[3]" or "['key']").
func at(err error, segment string) error {
	if fe, ok := err.(*FieldError); ok {
		fe.rev = append(fe.rev, segment)
	}
	return err
}

// finish turns the collected segments into Path.
func finish(err error) error {
	fe, ok := err.(*FieldError)
	if !ok {
		return err
	}
	var b strings.Builder
	for i := len(fe.rev) - 1; i >= 0; i-- {
		b.WriteString(fe.rev[i])
	}
	fe.Path = strings.TrimPrefix(b.String(), ".")
	fe.rev = nil
	return fe
}

func mismatch(want string, got any) error {
	return &FieldError{Msg: "want " + want + ", got " + describe(got)}
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return "string " + strconv.Quote(v)
	case bool:
		return "bool " + strconv.FormatBool(v)
	case float64, float32, int, int64, int32, uint64, uint32, uint, int16, int8, uint16, uint8:
		return fmt.Sprintf("number %v", v)
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// decode stores src (non-nil, as produced by encoding/json or a YAML decoder) into
// dst, a settable value of c.typ.
func (c *codec) decode(dst reflect.Value, src any) error {
	switch c.kind {
	case kString:
		switch s := src.(type) {
		case string:
			dst.SetString(s)
		case time.Time: // YAML decoders may produce timestamps for date-time fields.
			dst.SetString(s.UTC().Format(time.RFC3339))
		default:
			return mismatch("string", src)
		}
	case kIntOrString:
		if s, ok := src.(string); ok {
			dst.SetString(s)
			return nil
		}
		i, ok := toInt(src)
		if !ok {
			return mismatch("integer or string", src)
		}
		dst.SetString(strconv.FormatInt(i, 10))
	case kNumberOrString:
		if s, ok := src.(string); ok {
			dst.SetString(s)
			return nil
		}
		if i, ok := toInt(src); ok {
			dst.SetString(strconv.FormatInt(i, 10))
			return nil
		}
		f, ok := toFloat(src)
		if !ok {
			return mismatch("number or string", src)
		}
		dst.SetString(strconv.FormatFloat(f, 'f', -1, 64))
	case kInt:
		i, ok := toInt(src)
		if !ok {
			return mismatch("integer", src)
		}
		dst.SetInt(i)
	case kFloat:
		f, ok := toFloat(src)
		if !ok {
			return mismatch("number", src)
		}
		dst.SetFloat(f)
	case kBool:
		v, ok := src.(bool)
		if !ok {
			return mismatch("boolean", src)
		}
		dst.SetBool(v)
	case kAny:
		dst.Set(reflect.ValueOf(src))
	case kFreeObject:
		m, ok := src.(map[string]any)
		if !ok {
			return mismatch("object", src)
		}
		dst.Set(reflect.ValueOf(m))
	case kStruct:
		m, ok := src.(map[string]any)
		if !ok {
			return mismatch("object", src)
		}
		p := reflect.New(c.structType)
		if err := c.decodeFields(p.Elem(), m); err != nil {
			return err
		}
		dst.Set(p)
	case kSlice:
		return c.decodeSlice(dst, src)
	case kMap:
		return c.decodeMap(dst, src)
	default:
		return fmt.Errorf("internal: unknown codec kind %d", c.kind)
	}
	return nil
}

// check returns the error decode would return for src, without building a value.
func (c *codec) check(src any) error {
	switch c.kind {
	case kString:
		switch src.(type) {
		case string, time.Time:
			return nil
		}
		return mismatch("string", src)
	case kIntOrString:
		if _, ok := src.(string); ok {
			return nil
		}
		if _, ok := toInt(src); !ok {
			return mismatch("integer or string", src)
		}
	case kNumberOrString:
		if _, ok := src.(string); ok {
			return nil
		}
		if _, ok := toInt(src); ok {
			return nil
		}
		if _, ok := toFloat(src); !ok {
			return mismatch("number or string", src)
		}
	case kInt:
		if _, ok := toInt(src); !ok {
			return mismatch("integer", src)
		}
	case kFloat:
		if _, ok := toFloat(src); !ok {
			return mismatch("number", src)
		}
	case kBool:
		if _, ok := src.(bool); !ok {
			return mismatch("boolean", src)
		}
	case kAny:
	case kFreeObject:
		if _, ok := src.(map[string]any); !ok {
			return mismatch("object", src)
		}
	case kStruct:
		m, ok := src.(map[string]any)
		if !ok {
			return mismatch("object", src)
		}
		return c.checkFields(m)
	case kSlice:
		a, ok := src.([]any)
		if !ok {
			return mismatch("array", src)
		}
		for i, v := range a {
			if v == nil {
				continue
			}
			if err := c.elem.check(v); err != nil {
				return at(err, "["+strconv.Itoa(i)+"]")
			}
		}
	case kMap:
		m, ok := src.(map[string]any)
		if !ok {
			return mismatch("object", src)
		}
		for _, v := range m {
			if v != nil && c.elem.check(v) != nil {
				return c.firstMapError(m)
			}
		}
	default:
		return fmt.Errorf("internal: unknown codec kind %d", c.kind)
	}
	return nil
}

// checkFields is decodeFields' check.
func (c *codec) checkFields(m map[string]any) error {
	for k, v := range m {
		if f := c.fields[k]; f != nil && v != nil && f.c.check(v) != nil {
			return c.firstFieldError(m)
		}
	}
	return nil
}

// decodeFields fills the struct sv from m. Unknown keys and nulls are skipped. Map
// order is random, so on failure the fields are walked again in JSON-name order to
// report the same (first) error every time.
func (c *codec) decodeFields(sv reflect.Value, m map[string]any) error {
	for k, v := range m {
		f := c.fields[k]
		if f == nil || v == nil {
			continue
		}
		if err := f.c.decode(sv.Field(f.index), v); err != nil {
			return c.firstFieldError(m)
		}
	}
	return nil
}

func (c *codec) firstFieldError(m map[string]any) error {
	for _, f := range c.sorted {
		v := m[f.name]
		if v == nil {
			continue
		}
		if err := f.c.decode(reflect.New(f.c.typ).Elem(), v); err != nil {
			return at(err, "."+f.name)
		}
	}
	return fmt.Errorf("internal: conversion error vanished on retry")
}

func (c *codec) decodeSlice(dst reflect.Value, src any) error {
	a, ok := src.([]any)
	if !ok {
		return mismatch("array", src)
	}
	n := len(a)
	switch c.elem.kind {
	case kString: // the most common list; avoid per-element reflection
		out := make([]string, n)
		for i, v := range a {
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				if err := c.elem.decode(reflect.ValueOf(&out[i]).Elem(), v); err != nil {
					return at(err, "["+strconv.Itoa(i)+"]")
				}
				continue
			}
			out[i] = s
		}
		// dst is addressable (a struct field, slice element or fresh value) and its
		// type is []string; storing through a pointer avoids boxing the slice header.
		*(*[]string)(dst.Addr().UnsafePointer()) = out
		return nil
	case kStruct: // one allocation for all elements; elements point into it
		dst.Grow(n) // allocates only the array: dst is addressable
		dst.SetLen(n)
		out := dst
		backing := reflect.MakeSlice(c.backing, n, n)
		for i, v := range a {
			if v == nil {
				continue
			}
			m, ok := v.(map[string]any)
			if !ok {
				return at(mismatch("object", v), "["+strconv.Itoa(i)+"]")
			}
			e := backing.Index(i)
			if err := c.elem.decodeFields(e, m); err != nil {
				return at(err, "["+strconv.Itoa(i)+"]")
			}
			out.Index(i).Set(e.Addr())
		}
		return nil
	}
	dst.Grow(n)
	dst.SetLen(n)
	for i, v := range a {
		if v == nil {
			continue
		}
		if err := c.elem.decode(dst.Index(i), v); err != nil {
			return at(err, "["+strconv.Itoa(i)+"]")
		}
	}
	return nil
}

func (c *codec) decodeMap(dst reflect.Value, src any) error {
	m, ok := src.(map[string]any)
	if !ok {
		return mismatch("object", src)
	}
	if c.elem.kind == kString { // labels, annotations, selectors, ConfigMap data
		out := make(map[string]string, len(m))
		for k, v := range m {
			s, ok := v.(string)
			if !ok && v != nil {
				return c.firstMapError(m)
			}
			out[k] = s
		}
		*(*map[string]string)(dst.Addr().UnsafePointer()) = out
		return nil
	}
	out := reflect.MakeMapWithSize(c.typ, len(m))
	for k, v := range m {
		ev := reflect.New(c.elem.typ).Elem()
		if v != nil {
			if err := c.elem.decode(ev, v); err != nil {
				return c.firstMapError(m)
			}
		}
		out.SetMapIndex(reflect.ValueOf(k), ev)
	}
	dst.Set(out)
	return nil
}

func (c *codec) firstMapError(m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if m[k] == nil {
			continue
		}
		if err := c.elem.decode(reflect.New(c.elem.typ).Elem(), m[k]); err != nil {
			return at(err, "['"+k+"']")
		}
	}
	return fmt.Errorf("internal: conversion error vanished on retry")
}

// toInt accepts whole numbers as encoding/json (float64, json.Number via String) and
// YAML decoders (int, int64, uint64) produce them.
func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || n < math.MinInt64 || n >= math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case uint64:
		if n > math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case uint32:
		return int64(n), true
	case float32:
		return toInt(float64(n))
	case interface{ Int64() (int64, error) }: // json.Number
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float32:
		return float64(n), true
	case interface{ Float64() (float64, error) }: // json.Number
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
