package render

import (
	"reflect"

	"github.com/open2b/scriggo/native"
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
	return native.Declarations{"unit": e.unit, "end_unit": e.endUnit}
}

func (e *Engine) unit(key string, inputs ...any) bool {
	st := e.st
	rec := st.rec
	if rec == nil {
		return true
	}
	mk := rec.target + "\x00" + key
	if u := st.prev.unit(mk); u != nil && sameInputs(u.inputs, inputs) && u.deps.current(st) &&
		st.replay(u.deps, st.files) {
		rec.out.WriteString(u.output)
		rec.top().deps.add(u.deps)
		rec.push(&scope{unit: key, hit: true})
		st.next.putUnit(mk, u)
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
		out := string(rec.out.Bytes()[s.start:])
		e.st.next.putUnit(rec.target+"\x00"+key, &unitMemo{inputs: s.inputs, output: out, deps: &s.deps})
		e.st.reuse.UnitsRendered++
	}
	return ""
}

func sameInputs(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}
