package render

import (
	"cmp"
	"hash/maphash"
	"reflect"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/note"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// Incremental rendering. While a fragment renders — a top-level template, a
// shared.ComputeIfAbsent value, or a unit a template marks with unit()/end_unit() —
// every store query it makes (List, Fetch, GetSingle) is recorded with what it
// returned, together with its first_seen answers, the files it registered and the
// notes it made. The next
// render of the same Engine (with the same extraContext and currentConfig) reuses the
// fragment when every recorded query returns the same object versions on the new
// snapshot (objects are immutable, so a version is an object's identity) and replays
// its marks, files and notes; otherwise it renders the fragment again. A fragment that uses
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
	ikey  string // snapshot.IndexKey of the keys read (snapshot.KeysOf gives them)
	// at is a store that gives this answer, weakly: a fragment kept for later
	// renders must not keep every store version it was checked on alive (a route
	// created per change would hold one version of the routes' store each).
	at weak.Pointer[snapshot.Store]
	// got is a list read's answer (the store's own list, shared), versions a keyed
	// read's (a copy of its objects would be most of what a render's memo holds).
	got      []snapshot.Object
	versions []snapshot.Version
	// few holds versions when the answer has at most two objects (a Service, its
	// EndpointSlices): one allocation per read instead of two, 10,000 fewer in a
	// full render at 5,000 backends.
	few [2]snapshot.Version
}

// keyedRead is the record of a keyed read of resource's store at, answered with objs.
func keyedRead(resource, ikey string, at weak.Pointer[snapshot.Store], objs []snapshot.Object) *read {
	r := &read{store: resource, ikey: ikey, at: at}
	r.versions = r.few[:0]
	for _, o := range objs {
		r.versions = append(r.versions, o.Version())
	}
	return r
}

// sameAnswer reports whether got is the answer r had.
func (r *read) sameAnswer(got []snapshot.Object) bool {
	if r.list {
		return sameObjects(got, r.got)
	}
	if len(got) != len(r.versions) {
		return false
	}
	for i, o := range got {
		if o.Version() != r.versions[i] {
			return false
		}
	}
	return true
}

// mark is one first_seen call and its answer.
type mark struct {
	key   string
	first bool
}

// deps is what a fragment's output depends on besides its explicit inputs: its own
// store reads, the fragments it used (children, for their reads), and, flattened in
// call order, the first_seen answers, registered files and notes of all of them.
type deps struct {
	reads    []*read
	children []*deps
	marks    []mark
	files    []bundle.File
	notes    []note.Note
	// checkedIn is the render (renderState.gen) that last checked these deps and
	// currentThen its answer: a fragment used by many (a shared value, a unit) is
	// checked once per render, not once per user.
	checkedIn   uint64
	currentThen bool
	// stores are the stores it and the fragments it used queried (storesRead),
	// computed once: a finished fragment's deps never change.
	stores []string
	// keys are the index keys it and the fragments it used queried, per store, sorted
	// and each once (union), or its own reads' only when there are more than
	// maxUnion (large); verified a snapshot on which every query gave the recorded
	// answer.
	keys     storeKeys
	large    bool
	verified weak.Pointer[snapshot.Snapshot]
	// untouchedIn, untouchedFrom and untouchedThen are the last untouchedSince
	// answer (the render and the snapshot it was asked from): the fragments a
	// shared value used are walked once per render, not once per file using it.
	untouchedIn   uint64
	untouchedFrom weak.Pointer[snapshot.Snapshot]
	untouchedThen bool
}

// maxUnion bounds the keys a fragment gathers from the fragments it used (union):
// a run of 64 routes holds a few hundred, a top-level fragment every route's,
// which it would gather anew for every version of it.
const maxUnion = 1024

// storeKeys are index keys per store, each key once: a few stores, held as a list
// (a check ranges over them for every run of routes, 780 at 50,000, where ranging
// over a map was half of the check).
type storeKeys []storeKeyList

type storeKeyList struct {
	store string
	keys  keyList
}

// keyList is a set of index keys ordered by their hashes: a check of a changed key
// searches the hashes, held together, instead of comparing keys held apart (a
// fragment's check after a change at 50,000 routes made a thousand searches, each
// reading ten keys from ten places in memory).
type keyList struct {
	sums []uint64 // ascending
	keys []string // keys[i] hashes to sums[i]
}

// keySeed hashes index keys for the life of the process.
var keySeed = maphash.MakeSeed()

func keySum(k string) uint64 { return maphash.String(keySeed, k) }

// has reports whether k is in l.
func (l keyList) has(k string) bool {
	h := keySum(k)
	i, _ := slices.BinarySearch(l.sums, h)
	for ; i < len(l.sums) && l.sums[i] == h; i++ {
		if l.keys[i] == k {
			return true
		}
	}
	return false
}

// keyBuilder gathers keys for a keyList, with their hashes.
type keyBuilder struct {
	sums []uint64
	keys []string
}

func (b *keyBuilder) add(k string) {
	b.sums, b.keys = append(b.sums, keySum(k)), append(b.keys, k)
}

func (b *keyBuilder) addList(l keyList) {
	b.sums, b.keys = append(b.sums, l.sums...), append(b.keys, l.keys...)
}

// list orders the keys by hash (then key) and drops repeats.
func (b *keyBuilder) list() keyList {
	order := make([]int, len(b.keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		if c := cmp.Compare(b.sums[x], b.sums[y]); c != 0 {
			return c
		}
		return strings.Compare(b.keys[x], b.keys[y])
	})
	l := keyList{sums: make([]uint64, 0, len(order)), keys: make([]string, 0, len(order))}
	for _, i := range order {
		if n := len(l.keys); n > 0 && l.sums[n-1] == b.sums[i] && l.keys[n-1] == b.keys[i] {
			continue
		}
		l.sums, l.keys = append(l.sums, b.sums[i]), append(l.keys, b.keys[i])
	}
	return l
}

// union returns the index keys the fragment, or a fragment it used, queried, per
// store; a List is the key "" (snapshot.Store.Changes holds "" whenever any object
// changed). It is built once, and is nil for a fragment that used more than
// maxUnion keys. Call it only on a finished fragment.
func (d *deps) union() storeKeys {
	if d.large {
		return nil
	}
	if d.keys != nil {
		return d.keys
	}
	n := len(d.reads)
	for _, c := range d.children {
		u := c.union()
		for _, sk := range u {
			n += len(sk.keys.keys)
		}
		if u == nil || n > maxUnion {
			d.large, d.keys = true, readKeys(d.reads, nil)
			return nil
		}
	}
	d.keys = readKeys(d.reads, d.children)
	return d.keys
}

// readKeys are the index keys of reads and of what the fragments used queried, per
// store.
func readKeys(reads []*read, used []*deps) storeKeys {
	b := map[string]*keyBuilder{}
	builder := func(store string) *keyBuilder {
		if b[store] == nil {
			b[store] = &keyBuilder{}
		}
		return b[store]
	}
	for _, r := range reads {
		k := r.ikey
		if r.list {
			k = ""
		}
		builder(r.store).add(k)
	}
	for _, c := range used {
		for _, sk := range c.union() {
			builder(sk.store).addList(sk.keys)
		}
	}
	keys := make(storeKeys, 0, len(b)) // (never nil: nil is a large fragment's union)
	for store, kb := range b {
		keys = append(keys, storeKeyList{store, kb.list()})
	}
	return keys
}

// unchangedSince reports whether no store d queried changed, between the snapshot
// d was last found current on and the render's, under a key d queried: then every
// query gives the recorded answer without asking each one (a run of 64 routes
// asks hundreds). It answers false when it cannot tell (on-demand stores).
func (d *deps) unchangedSince(st *renderState) bool {
	v := d.verified.Value()
	if v == nil { // never found current, or that snapshot is gone
		return false
	}
	return d.untouchedSince(st, d.verified, v)
}

// untouchedSince is unchangedSince from snapshot v (vw its weak pointer): by d's
// union, or, for a large fragment, by its own reads and then each fragment it used.
func (d *deps) untouchedSince(st *renderState, vw weak.Pointer[snapshot.Snapshot], v *snapshot.Snapshot) bool {
	if d.untouchedIn == st.gen && d.untouchedFrom == vw {
		return d.untouchedThen
	}
	ok := d.keysUntouchedSince(st, vw, v)
	d.untouchedIn, d.untouchedFrom, d.untouchedThen = st.gen, vw, ok
	return ok
}

func (d *deps) keysUntouchedSince(st *renderState, vw weak.Pointer[snapshot.Snapshot], v *snapshot.Snapshot) bool {
	if u := d.union(); u != nil {
		return keysUntouched(st, v, u)
	}
	if !keysUntouched(st, v, d.keys) { // its own reads' (union)
		return false
	}
	for _, c := range d.children {
		if !c.untouchedSince(st, vw, v) {
			return false
		}
	}
	return true
}

// keysUntouched reports whether no store changed between snapshot v and the
// render's under one of the keys read.
func keysUntouched(st *renderState, v *snapshot.Snapshot, read storeKeys) bool {
	for _, sk := range read {
		store, keys := sk.store, sk.keys
		was, now := v.Stores[store], st.snapshot.Stores[store]
		if was == now {
			if now != nil && now.OnDemand != nil {
				return false
			}
			continue
		}
		if was == nil || now == nil || was.OnDemand != nil || now.OnDemand != nil {
			return false
		}
		changed := st.changes(was, now)
		if len(changed) < len(keys.keys) {
			for k := range changed {
				if keys.has(k) {
					return false
				}
			}
		} else {
			for _, k := range keys.keys {
				if changed[k] {
					return false
				}
			}
		}
	}
	return true
}

// storesRead returns the names of the stores the fragment, or a fragment it used,
// queried. Call it only on a finished fragment.
func (d *deps) storesRead() []string {
	if d.stores != nil {
		return d.stores
	}
	var s []string // sorted, each once: a fragment reads a store or two
	add := func(name string) {
		if i, found := slices.BinarySearch(s, name); !found {
			s = slices.Insert(s, i, name)
		}
	}
	for _, r := range d.reads {
		add(r.store)
	}
	for _, c := range d.children {
		for _, name := range c.storesRead() {
			add(name)
		}
	}
	if s == nil {
		s = []string{}
	}
	d.stores = s
	return s
}

// readKey is what makes two reads the same query: a store's List, or one index key.
type readKey struct {
	store string
	list  bool
	ikey  string
}

func (r *read) key() readKey {
	if r.list {
		return readKey{store: r.store, list: true}
	}
	return readKey{store: r.store, ikey: r.ikey}
}

// fewReads is how many reads a fragment compares a new read with: most fragments
// read one to three keys, and a fragment that reads many rarely reads a key twice
// but right after the first time (a read asked again is the same read:
// recentReads). A key read twice farther apart is kept twice, which costs its checks
// a comparison and nothing else; an index of the reads cost a full render more.
const fewReads = 16

func (d *deps) addRead(r *read) {
	recent := d.reads[max(0, len(d.reads)-fewReads):]
	if len(d.reads) <= fewReads {
		k := r.key()
		for _, o := range recent {
			if o == r || o.key() == k {
				return
			}
		}
	} else if slices.Contains(recent, r) {
		return
	}
	d.reads = append(d.reads, r)
}

// add makes d depend on what another fragment it used depends on.
func (d *deps) add(o *deps) {
	if o == nil {
		return
	}
	if len(o.reads) > 0 || len(o.children) > 0 {
		d.children = append(d.children, o)
	}
	d.marks = append(d.marks, o.marks...)
	d.files = append(d.files, o.files...)
	d.notes = append(d.notes, o.notes...)
}

// current reports whether every recorded query gives the same answer on the
// render's snapshot.
func (d *deps) current(st *renderState) bool {
	if d.checkedIn == st.gen {
		return d.currentThen
	}
	ok := d.unchangedSince(st) || d.check(st)
	d.checkedIn, d.currentThen = st.gen, ok
	if ok {
		d.verified = weak.Make(st.snapshot)
	}
	return ok
}

func (d *deps) check(st *renderState) bool {
	for _, r := range d.reads {
		if !st.same(r) {
			return false
		}
	}
	for _, c := range d.children {
		if !c.current(st) {
			return false
		}
	}
	return true
}

// same reports whether r gets the same answer now; then the current store is
// remembered as one that gives it, so later checks start from there.
func (st *renderState) same(r *read) bool {
	store := st.snapshot.Stores[r.store]
	at := r.at.Value() // nil: no store then, or one collected since
	if store != nil && store.OnDemand == nil && at != nil {
		if store == at {
			return true // stores are immutable: the same store answers the same
		}
		if !r.list && !st.changes(at, store)[r.ikey] {
			r.at = store.Weak()
			return true
		}
	}
	var got []snapshot.Object
	if r.list {
		got = listOf(store)
	} else if store != nil {
		objs, err := store.FetchIndexed(snapshot.KeysOf(r.ikey), r.ikey)
		if err != nil {
			return false
		}
		got = objs
	}
	if !r.sameAnswer(got) {
		return false
	}
	if store != nil && store.OnDemand == nil {
		r.at = store.Weak()
	}
	return true
}

// changes caches Store.Changes for the render.
func (st *renderState) changes(old, now *snapshot.Store) map[string]bool {
	k := [2]*snapshot.Store{old, now}
	if st.lastChanged.c != nil && st.lastChanged.k == k {
		return st.lastChanged.c // most reads in a row are of one store and its last version
	}
	if c, ok := st.changed[k]; ok {
		st.lastChanged.k, st.lastChanged.c = k, c
		return c
	}
	if st.changed == nil {
		st.changed = map[[2]*snapshot.Store]map[string]bool{}
	}
	c := now.Changes(old)
	st.changed[k] = c
	st.lastChanged.k, st.lastChanged.c = k, c
	return c
}

func sameObjects(a, b []snapshot.Object) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].SameVersion(b[i]) {
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
	out    *output
	stack  []*scope
	shared []string // the shared values it asked for, each once
}

// asked notes that the template asked for shared value key.
func (r *recorder) asked(key string) {
	if !slices.Contains(r.shared, key) {
		r.shared = append(r.shared, key)
	}
}

func newRecorder(target string, out *output) *recorder {
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
	files  map[string]*fileMemo             // top-level target → output
	units  map[string]map[string]*unitMemo  // target → unit key → output
	shared map[string]*sharedMemo           // shared key → value
	values map[string]map[string]*valueMemo // target → cached_value key → value
	kept   *libraryCaches
	// sizes are how many units and values each target held in the memo this one
	// follows, and how long its output was: its maps are made that large (growing
	// to 15,000 entries showed), and a render from nothing sizes its output so
	// (growing a 10 MB haproxy.cfg by doubling allocated twice its size).
	sizes map[string]targetSizes
}

type fileMemo struct {
	file bundle.File // passed checkOutput
	raw  bundle.Text // what the template wrote, before normalize (often file.Content itself; empty for haproxy.cfg, see out)
	out  *output     // raw as it was written (output.sameAs)
	deps *deps
	// marks are haproxy.cfg's normalizeConfig marks (nil for other files, or when
	// post-processing made the file something else than raw's normal form).
	marks []configMark
	// shared are the shared values the file asked for: kept, with what their
	// factories memoized, while the file is reused (nobody asks for them then).
	shared []string
}

type unitMemo struct {
	inputs []any
	output string
	deps   *deps
}

type valueMemo struct {
	inputs []any
	value  any
	deps   *deps
}

type sharedMemo struct {
	value any
	deps  *deps
}

func newMemo(extra map[string]any, current any) *memo {
	return &memo{extra: extra, current: current, files: map[string]*fileMemo{},
		units: map[string]map[string]*unitMemo{}, shared: map[string]*sharedMemo{}, values: map[string]map[string]*valueMemo{}}
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

func (m *memo) unit(target, key string) *unitMemo {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.units[target][key]
}

// carry keeps the units and values of a reused file for later renders.
func (m *memo) carry(from *memo, target string) {
	from.mu.Lock()
	units, values := from.units[target], from.values[target]
	from.mu.Unlock()
	m.mu.Lock()
	m.units[target], m.values[target] = units, values
	m.mu.Unlock()
}

func (m *memo) sharedValue(key string) *sharedMemo {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shared[key]
}

func (m *memo) value(target, key string) *valueMemo {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.values[target][key]
}

func (m *memo) putValue(target, key string, v *valueMemo) {
	m.mu.Lock()
	if m.values[target] == nil {
		m.values[target] = make(map[string]*valueMemo, m.sizes[target].values)
	}
	m.values[target][key] = v
	m.mu.Unlock()
}

// storesRead names the stores any top-level template of the render queried.
func (m *memo) storesRead() map[string]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]bool{}
	for _, f := range m.files {
		for _, name := range f.deps.storesRead() {
			out[name] = true
		}
	}
	return out
}

func (m *memo) putFile(target string, f *fileMemo) {
	m.mu.Lock()
	m.files[target] = f
	m.mu.Unlock()
}

func (m *memo) putUnit(target, key string, u *unitMemo) {
	m.mu.Lock()
	if m.units[target] == nil {
		m.units[target] = make(map[string]*unitMemo, m.sizes[target].units)
	}
	m.units[target][key] = u
	m.mu.Unlock()
}

func (m *memo) putShared(key string, s *sharedMemo) {
	m.mu.Lock()
	m.shared[key] = s
	m.mu.Unlock()
}

// keepShared keeps from's shared values of keys, with what their factories
// memoized, unless this render has them already: a reused file's, whose template
// did not run to ask for them.
func (m *memo) keepShared(from *memo, keys []string) {
	for _, key := range keys {
		if s := from.sharedValue(key); s != nil && m.sharedValue(key) == nil {
			m.takeShared(from, key, s)
		}
	}
}

// takeShared keeps from's shared value s of key with what its factory memoized.
func (m *memo) takeShared(from *memo, key string, s *sharedMemo) {
	m.putShared(key, s)
	m.carry(from, sharedTarget(key))
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

// sizeLike makes m's maps as large as those of last (nil: as they come).
func (m *memo) sizeLike(last *memo) {
	if last == nil {
		return
	}
	last.mu.Lock()
	defer last.mu.Unlock()
	m.sizes = map[string]targetSizes{}
	for target, us := range last.units {
		n := m.sizes[target]
		n.units = len(us)
		m.sizes[target] = n
	}
	for target, vs := range last.values {
		n := m.sizes[target]
		n.values = len(vs)
		m.sizes[target] = n
	}
	for target, f := range last.files {
		n := m.sizes[target]
		n.output = f.out.Len() // (a render from nothing writes it all directly)
		m.sizes[target] = n
	}
}

// targetSizes are a target's sizes in a memo (memo.sizes).
type targetSizes struct{ units, values, output int }

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
