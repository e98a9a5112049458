package render

import (
	"reflect"
	"slices"

	"github.com/open2b/scriggo/native"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// Units are the explicit per-object fragments of incremental rendering (memo.go).
// A template marks one with
//
//	{% if unit("backend " + name, b) %}
//	  ... output for b ...
//	{% end %}{{ end_unit("backend " + name) }}
//
// unit(key, inputs...) writes the unit's output of an earlier render and returns
// false when that render had equal inputs (reflect.DeepEqual) and nothing the unit
// read from the stores has changed; otherwise it returns true and the body renders.
// end_unit(key) ends the unit (a body left with continue or break is simply not
// memoized). The inputs must name everything the body reads besides watched
// resources and globals, and must not be modified afterwards.

func (e *Engine) unitDeclarations() native.Declarations {
	return native.Declarations{"unit": e.unit, "end_unit": e.endUnit, "cached_value": e.cachedValue,
		"cached": e.cached, "end_cached": e.endCached, "map_text": e.mapText}
}

// mapText is map_text(index, name): the text of a map the library keeps between
// renders, index["mapText"][name] (gateway_merge_runs, ingress_merge_runs), written
// into the file being rendered as the pieces it is held in — a map of 50,000 routes
// is not copied into one string for a route added — and "" returned; the text
// itself where nothing is being rendered, or for a small one.
//
//	{{ map_text(idx, "hosts") }}
func (e *Engine) mapText(index map[string]any, name string) string {
	var t bundle.Text
	switch m := index["mapText"].(type) {
	case map[string]bundle.Text:
		t = m[name]
	case map[string]string:
		return m[name]
	}
	if e.st.out == nil || t.Len() < heldPiece {
		return t.String()
	}
	e.st.out.holdText(t)
	return ""
}

// cached and end_cached are cached_value without a function for Go to call (which
// costs a new virtual machine per call): the template computes the value in place.
//
//	{% var v, ok = cached("ingress " + key, input) %}
//	{% if !ok %}{% v = end_cached("ingress " + key, compute(...)) %}{% end %}
//
// cached(key, inputs...) returns the value of an earlier render and true when that
// render had equal inputs and nothing read since cached() was called changed;
// otherwise it returns nil and false and records what is read until end_cached(key,
// v), which memoizes v and returns it. Keys share cached_value's.
func (e *Engine) cached(key string, inputs ...any) (any, bool) {
	rec := e.st.rec
	if rec == nil {
		return nil, false
	}
	if v := e.standing(key, inputs); v != nil && e.take(key, inputs, v) {
		return v.value, true
	}
	rec.push(&scope{unit: cachedScope + key, inputs: inputs})
	return nil, false
}

// standing is an earlier render's memo of value key when it had equal inputs and
// nothing it read changed (take may still refuse it); nil otherwise, and when the
// render is not recording.
func (e *Engine) standing(key string, inputs []any) *valueMemo {
	st := e.st
	if st.rec == nil {
		return nil
	}
	if v := st.prev.value(st.rec.target, key); v != nil && sameInputs(v.inputs, inputs) && v.deps.current(st) {
		return v
	}
	return nil
}

// take reuses v, standing for key: its first_seen calls are replayed (false when
// they would answer otherwise: then it is not reused), its files and notes made
// again, and the innermost fragment depends on what it read.
func (e *Engine) take(key string, inputs []any, v *valueMemo) bool {
	st := e.st
	if !st.replay(v.deps, st.files) {
		return false
	}
	st.rec.top().deps.add(v.deps)
	st.next.putValue(st.rec.target, key, v.with(inputs))
	st.reuse.Units++
	return true
}

// keep memoizes value under key, made with the reads d (the fragment that used it
// depends on them already).
func (e *Engine) keep(key string, inputs []any, value any, d *deps) {
	st := e.st
	st.next.putValue(st.rec.target, key, &valueMemo{inputs: inputs, value: value, deps: st.made(d)})
	st.reuse.UnitsRendered++
}

// memoize is cached and end_cached around value, computed apart from the template
// (apart.go) with the reads d: the innermost fragment depends on them, and the
// value is memoized under key.
func (e *Engine) memoize(key string, inputs []any, value any, d *deps) {
	e.st.rec.top().deps.add(d)
	e.keep(key, inputs, value, d)
}

// recordInto runs fn, which calls template functions, with the store reads, files
// and notes they record going to d (a value computed apart) instead of the
// innermost fragment.
func (e *Engine) recordInto(d *deps, fn func()) {
	rec := e.st.rec
	if rec == nil || d == nil {
		fn()
		return
	}
	s := &scope{unit: "\x00apart"}
	rec.push(s)
	defer func() {
		if i := slices.Index(rec.stack, s); i > 0 {
			rec.stack = rec.stack[:i] // (a panic may leave scopes of fn's open)
		}
		d.add(&s.deps)
	}()
	fn()
}

// cachedScope marks the scope of a cached() value apart from unit keys.
const cachedScope = "\x00value "

func (e *Engine) endCached(key string, value any) any {
	rec := e.st.rec
	if rec == nil {
		return value
	}
	i := len(rec.stack) - 1
	for i > 0 && rec.stack[i].unit != cachedScope+key {
		i--
	}
	if i == 0 {
		return value // no such value open
	}
	for len(rec.stack) > i+1 {
		rec.pop() // units left open inside: not memoized
	}
	s := rec.pop()
	e.keep(key, s.inputs, value, &s.deps)
	return value
}

// cachedValue is the unit of a computation: cached_value(key, fn, inputs...) returns
// fn() of an earlier render when that render had equal inputs and nothing fn read from
// the stores changed, else it calls fn. Keys are per top-level template. The value must
// not be modified. (Calling a template function from Go starts a new virtual machine,
// about 23 µs: worth it for work per object, not for a line of output.)
func (e *Engine) cachedValue(key string, fn func() any, inputs ...any) any {
	st := e.st
	rec := st.rec
	if rec == nil {
		return fn()
	}
	if v := e.standing(key, inputs); v != nil && e.take(key, inputs, v) {
		return v.value
	}
	rec.push(&scope{unit: cachedScope + key})
	depth := len(rec.stack)
	var out any
	done := false
	func() {
		defer func() { // also when fn panics: the panic goes on, nothing is memoized
			for len(rec.stack) > depth {
				rec.pop() // units fn left open
			}
			s := rec.pop()
			if done {
				e.keep(key, inputs, out, &s.deps)
			}
		}()
		out = fn()
		done = true
	}()
	return out
}

func (e *Engine) unit(key string, inputs ...any) bool {
	st := e.st
	rec := st.rec
	if rec == nil {
		return true
	}
	if u := st.prev.unit(rec.target, key); u != nil && sameInputs(u.inputs, inputs) && u.deps.current(st) &&
		st.replay(u.deps, st.files) {
		rec.out.writeHeld(u.output)
		rec.top().deps.add(u.deps)
		rec.push(&scope{unit: key, hit: true})
		st.next.putUnit(rec.target, key, u.with(inputs))
		st.reuse.Units++
		return false
	}
	rec.push(&scope{unit: key, start: rec.out.Len(), inputs: inputs})
	return true
}

func (e *Engine) endUnit(key string) string {
	rec := e.st.rec
	if rec == nil {
		return ""
	}
	i := len(rec.stack) - 1
	for i > 0 && rec.stack[i].unit != key {
		i--
	}
	if i == 0 {
		return "" // no such unit open
	}
	for len(rec.stack) > i+1 {
		rec.pop() // units left with continue or break: not memoized
	}
	s := rec.pop()
	if !s.hit {
		out := rec.out.from(s.start) // a copy: the memo must not keep the whole output
		e.st.next.putUnit(rec.target, key, &unitMemo{inputs: s.inputs, output: out, deps: e.st.made(&s.deps)})
		e.st.reuse.UnitsRendered++
	}
	return ""
}

// with is u (or v) remembered with inputs, equal to its own: the next render compares
// them with its inputs, and inputs that are the very same values compare at once
// (equal ones kept from an older render would be walked by every render after).
func (u *unitMemo) with(inputs []any) *unitMemo {
	return &unitMemo{inputs: inputs, output: u.output, deps: u.deps}
}

func (v *valueMemo) with(inputs []any) *valueMemo {
	return &valueMemo{inputs: inputs, value: v.value, deps: v.deps}
}

func sameInputs(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameInput(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sameInput is reflect.DeepEqual with a short cut for what templates pass most: maps
// and backend entries (and lists of them) that are often the very same values as in
// the last render, when they come from a reused fragment. DeepEqual walks those too.
// Gateway backends compare without the servers they carry (sameGatewayBackend).
func sameInput(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok && sameMap(x, y) {
			return true
		}
	case []map[string]any:
		y, ok := b.([]map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameMap(x[i], y[i]) && !reflect.DeepEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *IngressBackend:
		if y, ok := b.(*IngressBackend); ok && x == y {
			return true
		}
	case []*IngressBackend:
		return sameEntries(x, b, func(p, q *IngressBackend) bool { return reflect.DeepEqual(p, q) })
	case *GatewayBackend:
		y, ok := b.(*GatewayBackend)
		return ok && sameGatewayBackend(x, y)
	case []*GatewayBackend:
		return sameEntries(x, b, sameGatewayBackend)
	case []string: // a run's keys: mostly the very same strings
		y, ok := b.([]string)
		return ok && (x == nil) == (y == nil) && slices.Equal(x, y) // (as DeepEqual: nil is not empty)
	case [][]string: // runs of gateway_route_order: the same items, or equal ones
		y, ok := b.([][]string)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !sameKey(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// sameMap reports whether a and b are the same map (not merely equal ones).
func sameMap(a, b map[string]any) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sameGatewayBackend compares two backends by their Service port, not by the
// servers their routes' shares read of it (readServers): the fragment that writes
// them depends on those reads, and renders again when they answer otherwise.
func sameGatewayBackend(x, y *GatewayBackend) bool {
	if x == y || x == nil || y == nil {
		return x == y
	}
	a, b := *x, *y
	if (a.servers == nil) != (b.servers == nil) || a.servers != nil && a.servers.ref != b.servers.ref {
		return false
	}
	a.servers, b.servers = nil, nil
	return reflect.DeepEqual(a, b)
}

// sameEntries reports whether b is a list of the same entries as x, or equal ones.
func sameEntries[T any](x []*T, b any, equal func(p, q *T) bool) bool {
	y, ok := b.([]*T)
	if !ok || len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] && !equal(x[i], y[i]) {
			return false
		}
	}
	return true
}
