package render

import (
	"bytes"
	"reflect"
	"strings"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// Incremental rendering. While a fragment renders — a top-level template, a
// shared.ComputeIfAbsent value, or a unit a template marks with unit()/end_unit() —
// every store query it makes (List, Fetch, GetSingle) is recorded with what it
// returned, together with its first_seen answers and the files it registered. The next
// render of the same Engine (with the same extraContext and currentConfig) reuses the
// fragment when every recorded query returns the same object versions on the new
// snapshot (objects are immutable, so a version is an object's identity) and replays
// its marks and files; otherwise it renders the fragment again. A fragment that uses
// another one (a template reading a shared value, a unit inside a unit) depends on
// what that one read too, so a change reaches everything that could show it.
//
// What a fragment reads besides the stores must not change between renders without
// the engine seeing it: globals are compile-time constants except extraContext and
// currentConfig, which key the memo; units name their other inputs explicitly.

// read is one store query and its answer.
type read struct {
	store string
	list  bool
	keys  []string
	at    *snapshot.Store // the store that answered
	got   []snapshot.Object
}

// mark is one first_seen call and its answer.
type mark struct {
	key   string
	first bool
}

// deps is what a fragment's output depends on besides its explicit inputs.
type deps struct {
	reads map[string]*read
	marks []mark
	files []bundle.File
}

func readKey(store string, list bool, keys []string) string {
	if list {
		return store + "\x00L"
	}
	return store + "\x00F" + indexKeyOf(keys)
}

// indexKeyOf encodes keys injectively.
func indexKeyOf(keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(itoa(len(k)))
		b.WriteByte(':')
		b.WriteString(k)
	}
	return b.String()
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return string(buf[i:])
}

func (d *deps) addRead(r *read) {
	if d.reads == nil {
		d.reads = map[string]*read{}
	}
	k := readKey(r.store, r.list, r.keys)
	if _, ok := d.reads[k]; !ok {
		d.reads[k] = r
	}
}

// add merges what another fragment this one used depends on.
func (d *deps) add(o *deps) {
	if o == nil {
		return
	}
	if len(o.reads) > 0 && d.reads == nil {
		d.reads = make(map[string]*read, len(o.reads))
	}
	for k, r := range o.reads {
		if _, ok := d.reads[k]; !ok {
			d.reads[k] = r
		}
	}
	d.marks = append(d.marks, o.marks...)
	d.files = append(d.files, o.files...)
}

// current reports whether every recorded query gives the same answer on snap.
func (d *deps) current(snap *snapshot.Snapshot) bool {
	for _, r := range d.reads {
		st := snap.Stores[r.store]
		if st == r.at && (st == nil || st.OnDemand == nil) {
			continue // stores are immutable: the same store answers the same
		}
		var got []snapshot.Object
		if r.list {
			got = listOf(st)
		} else if st != nil {
			objs, err := st.Fetch(r.keys...)
			if err != nil {
				return false
			}
			got = objs
		}
		if !sameObjects(got, r.got) {
			return false
		}
	}
	return true
}

func sameObjects(a, b []snapshot.Object) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if reflect.ValueOf(a[i].Raw).UnsafePointer() != reflect.ValueOf(b[i].Raw).UnsafePointer() {
			return false
		}
	}
	return true
}

// scope is a fragment being rendered.
type scope struct {
	unit   string // unit key; "" for a top-level template or a shared value
	start  int    // output offset where a unit starts
	inputs []any
	hit    bool // a reused unit: nothing to memoize at its end
	deps   deps
}

// recorder follows the fragments of one top-level template while it renders.
type recorder struct {
	target string
	out    *bytes.Buffer
	stack  []*scope
}

func newRecorder(target string, out *bytes.Buffer) *recorder {
	return &recorder{target: target, out: out, stack: []*scope{{}}}
}

func (r *recorder) top() *scope { return r.stack[len(r.stack)-1] }

func (r *recorder) push(s *scope) { r.stack = append(r.stack, s) }

// pop ends the innermost fragment; what it depends on, its parent depends on too.
func (r *recorder) pop() *scope {
	s := r.top()
	r.stack = r.stack[:len(r.stack)-1]
	if !s.hit {
		r.top().deps.add(&s.deps)
	}
	return s
}

// root ends every open fragment and returns the template's dependencies.
func (r *recorder) root() *deps {
	for len(r.stack) > 1 {
		r.pop()
	}
	return &r.stack[0].deps
}

// memo is what the renders of one Engine with one extraContext and currentConfig
// can reuse.
type memo struct {
	extra   map[string]any
	current any

	mu     sync.Mutex
	files  map[string]*fileMemo   // top-level target → output
	units  map[string]*unitMemo   // target + "\x00" + unit key → output
	shared map[string]*sharedMemo // shared key → value
}

type fileMemo struct {
	file bundle.File
	deps *deps
}

type unitMemo struct {
	inputs []any
	output string
	deps   *deps
}

type sharedMemo struct {
	value any
	deps  *deps
}

func newMemo(extra map[string]any, current any) *memo {
	return &memo{extra: extra, current: current, files: map[string]*fileMemo{},
		units: map[string]*unitMemo{}, shared: map[string]*sharedMemo{}}
}

func (m *memo) matches(extra map[string]any, current any) bool {
	return reflect.DeepEqual(m.extra, extra) && reflect.DeepEqual(m.current, current)
}

func (m *memo) file(target string) *fileMemo {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.files[target]
}

func (m *memo) unit(key string) *unitMemo {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.units[key]
}

func (m *memo) sharedValue(key string) *sharedMemo {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shared[key]
}

func (m *memo) putFile(target string, f *fileMemo) {
	m.mu.Lock()
	m.files[target] = f
	m.mu.Unlock()
}

func (m *memo) putUnit(key string, u *unitMemo) {
	m.mu.Lock()
	m.units[key] = u
	m.mu.Unlock()
}

func (m *memo) putShared(key string, s *sharedMemo) {
	m.mu.Lock()
	m.shared[key] = s
	m.mu.Unlock()
}

// maxMemos bounds the memos an Engine keeps: one per fleet (extraContext) it renders.
const maxMemos = 8

// memoFor returns the memo of earlier renders with extra and current, or nil.
func (e *Engine) memoFor(extra map[string]any, current any) *memo {
	for _, m := range e.memos {
		if m.matches(extra, current) {
			return m
		}
	}
	return nil
}

// keepMemo makes m the memo for its extraContext, most recently used first.
func (e *Engine) keepMemo(m *memo) {
	out := []*memo{m}
	for _, old := range e.memos {
		if len(out) < maxMemos && !old.matches(m.extra, m.current) {
			out = append(out, old)
		}
	}
	e.memos = out
}
