package snapshot

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"
	"weak"

	"github.com/haproxy-haptic/haptic/internal/fieldpath"
)

// Object is one watched object.
type Object struct {
	Namespace string
	Name      string
	// Raw is the object as decoded JSON, after ignored fields were stripped.
	Raw map[string]any
	// Convert makes the typed value from Raw (a pointer to a value of the resource's
	// schema type; nil when the resource has none): see TypedValue. A store builder
	// checks an object against the schema as it admits it (a value of the wrong type
	// is refused there) and keeps this, not the value: most objects are only ever
	// read by Go helpers, and the typed copies were a fifth of the objects' memory.
	Convert func(map[string]any) (reflect.Value, error)
	// Refused says why the object is kept out of templates ("<field>: <reason>"),
	// e.g. a string that holds a control character; empty for usable objects.
	Refused string
	// Forms are the compact forms readers made of Raw (nil: the object was not
	// admitted by a store builder, and readers make them each time).
	Forms *Forms
}

// SameVersion reports whether o and p are one admitted version of an object (the
// same Raw map), without reading them.
func (o Object) SameVersion(p Object) bool { return o.Version() == p.Version() }

// Version identifies an admitted version of an object (its Raw map): what a reader
// keeps to tell later whether it would get the same objects, a word per object
// instead of the Object.
type Version struct{ raw unsafe.Pointer }

// Version is o's version: Raw's map pointer (what a map value is), read without
// reflect, since a diff of two versions of a store asks it of every object.
func (o Object) Version() Version { return Version{*(*unsafe.Pointer)(unsafe.Pointer(&o.Raw))} }

// typedForm is the Forms kind of a typed value made by Convert.
type typedForm struct{}

// TypedValue is the object's typed value, made by Convert once per object version
// (each time for an object without Forms); invalid when the resource has no schema.
func (o Object) TypedValue() reflect.Value {
	if o.Convert == nil {
		return reflect.Value{}
	}
	if o.Forms != nil {
		if v, ok := o.Forms.Get(typedForm{}); ok {
			return v.(reflect.Value)
		}
	}
	v, err := o.Convert(o.Raw)
	if err != nil {
		return reflect.Value{} // (admission converted this Raw without an error)
	}
	if o.Forms != nil {
		o.Forms.Put(typedForm{}, v)
	}
	return v
}

// Ref names a watched object: the watched resource's name and namespace/name.
type Ref struct{ Resource, Key string }

// LeftOut is an object the templates did not see, and why.
type LeftOut struct {
	Resource string // the watched resource's name
	Key      string // namespace/name
	Reason   string
}

// Key is namespace/name (or name for cluster-scoped objects).
func (o Object) Key() string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// Loader fetches objects of an on-demand store when a template reads them.
type Loader interface {
	Fetch(keys ...string) ([]Object, error)
}

// Store is the objects of one watched resource.
type Store struct {
	Name    string
	IndexBy []fieldpath.Path
	// Type is the typed element type (a struct), nil for untyped resources.
	Type    reflect.Type
	objects []Object
	refused []Object
	// keyOrdered: the index is namespace and name, the order objects are sorted
	// in, so Fetch searches the objects and no index is built (a store made With a
	// change of one route would otherwise index every route again).
	keyOrdered bool
	// index is the objects under their full index keys when the store is not
	// key-ordered (index.go), prefixes those under fewer keys, found when asked.
	index    *objectIndex
	prefixes prefixIndex
	// lookup finds objects by namespace and name once this version was searched
	// often (lookup.go).
	lookup keyLookup
	// keys are the objects' keys (Object.Key), kept with the store: templates list
	// them on every render (Keys), and building 3,000 of them each time showed.
	keys []string
	// OnDemand, when set, answers Fetch and GetSingle instead of the held objects.
	OnDemand Loader
	// base is the store this one was made from by a few edits (With, Revert), held
	// weakly, and gone and came are those edits (as DiffObjects gives them): a
	// render's Changes between the two then costs the edits, not a walk over every
	// object.
	base       weak.Pointer[Store]
	gone, came []Object
	// self is Weak's, made once: a render records a read of the store as a weak
	// pointer to it, thousands of times, and weak.Make looks its record up each time.
	selfOnce sync.Once
	self     weak.Pointer[Store]
}

// Weak is a weak pointer to s (weak.Make(s), made once).
func (s *Store) Weak() weak.Pointer[Store] {
	s.selfOnce.Do(func() { s.self = weak.Make(s) })
	return s.self
}

// IndexKey encodes the keys of a Fetch as the store's index does.
func IndexKey(keys []string) string { return indexKey(keys) }

// KeysOf is the keys IndexKey encoded in ikey (nil when ikey is not such an
// encoding).
func KeysOf(ikey string) []string {
	var keys []string
	for ikey != "" {
		n, rest, ok := strings.Cut(ikey, ":")
		l, err := strconv.Atoi(n)
		if !ok || err != nil || l < 0 || l > len(rest) {
			return nil
		}
		keys, ikey = append(keys, rest[:l]), rest[l:]
	}
	return keys
}

// indexKey encodes index values injectively (length-prefixed), so that no single
// value, whatever bytes it holds, can stand for several values.
func indexKey(keys []string) string {
	var buf [64]byte // (every read of a render builds one: one allocation, the string)
	return string(AppendIndexKey(buf[:0], keys))
}

// AppendIndexKey appends IndexKey(keys) to dst: a caller that may find the key among
// those it holds compares it without making a string.
func AppendIndexKey(dst []byte, keys []string) []byte {
	for _, k := range keys {
		dst = strconv.AppendInt(dst, int64(len(k)), 10)
		dst = append(dst, ':')
		dst = append(dst, k...)
	}
	return dst
}

// NewStore sorts objects and builds the index. Objects must not be modified
// afterwards. Refused objects are kept aside: templates never see them.
func NewStore(name string, indexBy []fieldpath.Path, typ reflect.Type, objects []Object) *Store {
	objs, refused := split(objects)
	s := &Store{Name: name, IndexBy: indexBy, Type: typ, objects: objs, refused: refused}
	s.keys = make([]string, len(objs))
	s.keyOrdered = indexIsKey(indexBy)
	for i, o := range objs {
		s.keys[i] = o.Key()
		s.keyOrdered = s.keyOrdered && s.keyIsIdentity(o)
	}
	if !s.keyOrdered {
		s.index = newObjectIndex(objs, s.fullKey)
	}
	return s
}

// indexIsKey reports whether indexBy indexes by namespace and name (the default).
func indexIsKey(indexBy []fieldpath.Path) bool {
	return len(indexBy) == 0 || len(indexBy) == 2 &&
		slices.Equal(indexBy[0].Steps, fieldpath.Namespace.Steps) && slices.Equal(indexBy[1].Steps, fieldpath.Name.Steps)
}

// keyIsIdentity reports whether an object's index values are its namespace and
// name (an object whose metadata says otherwise is indexed by map).
func (s *Store) keyIsIdentity(o Object) bool {
	v := s.indexValues(o.Raw)
	return len(v) == 2 && v[0] == o.Namespace && v[1] == o.Name
}

// fullKey is the index key of all of an object's index values.
func (s *Store) fullKey(o Object) string { return indexKey(s.indexValues(o.Raw)) }

// indexLen is how many index values each object has.
func (s *Store) indexLen() int {
	if len(s.IndexBy) == 0 {
		return 2 // namespace and name
	}
	return len(s.IndexBy)
}

// split parts objects into those templates see and the refused ones, each sorted
// by namespace and name.
func split(objects []Object) (held, refused []Object) {
	held = make([]Object, 0, len(objects))
	for _, o := range objects {
		if o.Refused != "" {
			refused = append(refused, o)
		} else {
			held = append(held, o)
		}
	}
	sortObjects(held)
	sortObjects(refused)
	return held, refused
}

func sortObjects(objs []Object) {
	sort.SliceStable(objs, func(i, j int) bool { return less(objs[i], objs[j]) })
}

// With returns a store holding s's objects with the objects of put (by
// namespace/name) added or in place of s's, and those under the keys of drop
// removed: NewStore of that set, computing only the new objects' index keys.
func (s *Store) With(put []Object, drop []string) *Store {
	gone := make(map[string]bool, len(put)+len(drop))
	for _, k := range drop {
		gone[k] = true
	}
	last := make(map[string]int, len(put)) // a key put twice: the later object
	for i, o := range put {
		last[o.Key()] = i
	}
	latest := make([]Object, 0, len(put))
	for i, o := range put {
		gone[o.Key()] = true
		if last[o.Key()] == i {
			latest = append(latest, o)
		}
	}
	added, addedRefused := split(latest)
	out := &Store{Name: s.Name, IndexBy: s.IndexBy, Type: s.Type, OnDemand: s.OnDemand,
		objects: make([]Object, 0, len(s.objects)+len(added)), keys: make([]string, 0, len(s.objects)+len(added))}
	out.keyOrdered = s.keyOrdered
	for _, o := range added {
		out.keyOrdered = out.keyOrdered && out.keyIsIdentity(o)
	}
	// Objects taken out are found by binary search and the kept ones copied in
	// runs: a change of one object costs no key per object of the store.
	var taken []int
	for k := range gone {
		if i, ok := s.find(splitKey(k)); ok {
			taken = append(taken, i)
		}
	}
	sort.Ints(taken)
	i, t := 0, 0
	for j := 0; j <= len(added); j++ {
		stop := len(s.objects) // where added[j] goes
		if j < len(added) {
			stop, _ = s.find(added[j].Namespace, added[j].Name)
		}
		for i < stop {
			end := stop
			if t < len(taken) && taken[t] < stop {
				end = taken[t]
			}
			out.objects, out.keys = append(out.objects, s.objects[i:end]...), append(out.keys, s.keys[i:end]...)
			if i = end; t < len(taken) && taken[t] == i {
				i, t = i+1, t+1
			}
		}
		if j < len(added) {
			out.objects, out.keys = append(out.objects, added[j]), append(out.keys, added[j].Key())
		}
	}
	for _, o := range s.refused {
		if !gone[o.Key()] {
			out.refused = append(out.refused, o)
		}
	}
	out.refused = append(out.refused, addedRefused...)
	sortObjects(out.refused)
	removed := make([]Object, len(taken))
	for k, i := range taken {
		removed[k] = s.objects[i]
	}
	switch {
	case out.keyOrdered:
	case s.index == nil: // an object's index values are no longer its key
		out.index = newObjectIndex(out.objects, out.fullKey)
	default:
		out.index = s.index.edited(removed, added, out.fullKey)
	}
	out.madeFrom(s, removed, added)
	return out
}

// madeFrom records that s is base with the held objects gone taken out and came
// put in (a version put again in place of itself is no change). It keeps the two
// lists, which the caller leaves to it.
func (s *Store) madeFrom(base *Store, gone, came []Object) {
	gone = slices.DeleteFunc(gone, func(g Object) bool {
		i := slices.IndexFunc(came, g.SameVersion)
		if i >= 0 {
			came = slices.Delete(came, i, i+1)
		}
		return i >= 0
	})
	sortObjects(gone)
	sortObjects(came)
	s.base, s.gone, s.came = weak.Make(base), gone, came
}

// Diff is DiffObjects(old's objects, s's) (old nil: empty), from the edits that
// made one store of the other when there are such: a walk of both lists otherwise.
// The lists returned are the store's: not to be modified.
func (s *Store) Diff(old *Store) (gone, came []Object) {
	if old != nil && s.base.Value() == old {
		return s.gone, s.came
	}
	if old != nil && old.base.Value() == s {
		return old.came, old.gone
	}
	var before []Object
	if old != nil {
		before = old.objects
	}
	return DiffObjects(before, s.objects)
}

// indexValues are the object's values at the indexBy paths. Without indexBy, objects
// are indexed by namespace and name.
func (s *Store) indexValues(raw map[string]any) []string {
	if len(s.IndexBy) == 0 {
		return []string{fieldpath.Namespace.GetString(raw), fieldpath.Name.GetString(raw)}
	}
	out := make([]string, len(s.IndexBy))
	for i, p := range s.IndexBy {
		out[i] = p.GetString(raw)
	}
	return out
}

// Changes returns the index keys (IndexKey of every prefix of an object's index
// values, "" included) whose Fetch answers may differ between old and s: those of
// every object added, removed or replaced. Both stores must be of one resource.
func (s *Store) Changes(old *Store) map[string]bool {
	out := map[string]bool{}
	touch := func(o Object, st *Store) {
		keys := st.indexValues(o.Raw)
		out[""] = true
		for n := 1; n <= len(keys); n++ {
			out[indexKey(keys[:n])] = true
		}
	}
	gone, came := s.Diff(old)
	for _, o := range gone {
		touch(o, old)
	}
	for _, o := range came {
		touch(o, s)
	}
	return out
}

// find is where the object ns/name is in s.objects, or where it would go.
func (s *Store) find(ns, name string) (int, bool) { return s.lookup.find(s.objects, s.keys, ns, name) }

// search is where the object ns/name is in objs (sorted), or where it would go.
func search(objs []Object, ns, name string) (int, bool) {
	i := sort.Search(len(objs), func(x int) bool {
		o := &objs[x] // (not copied: a lookup per backend of a render)
		if o.Namespace != ns {
			return o.Namespace > ns
		}
		return o.Name >= name
	})
	return i, i < len(objs) && objs[i].Namespace == ns && objs[i].Name == name
}

// Get is the object under key (namespace/name, or name), held or refused.
func (s *Store) Get(key string) (Object, bool) {
	ns, name := splitKey(key)
	for _, objs := range [][]Object{s.objects, s.refused} {
		if i, ok := search(objs, ns, name); ok {
			return objs[i], true
		}
	}
	return Object{}, false
}

// splitKey is a key's namespace and name (Object.Key).
func splitKey(key string) (ns, name string) {
	if ns, name, ok := strings.Cut(key, "/"); ok {
		return ns, name
	}
	return "", key
}

func less(a, b Object) bool { return compareKeys(a, b) < 0 }

// compareKeys orders objects by namespace, then name (the stores' order).
func compareKeys(a, b Object) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// List returns every object, sorted by namespace and name.
func (s *Store) List() []Object { return s.objects }

// Keys returns the keys of the held objects in their order, a copy the caller may
// change.
func (s *Store) Keys() []string { return slices.Clone(s.keys) }

// SharedKeys returns the keys of the held objects in their order, shared with the
// store: the caller must not change them (a Go helper reading them per render;
// templates get Keys' copy).
func (s *Store) SharedKeys() []string { return s.keys }

// Refused returns the objects kept out of the store, sorted by namespace and name.
func (s *Store) Refused() []Object { return s.refused }

// Len is the number of held objects.
func (s *Store) Len() int { return len(s.objects) }

// Fetch returns the objects whose first len(keys) index values equal keys: the
// store's own, which the caller must not change (a render's readers keep versions
// of what they read, and templates get slices of their own).
func (s *Store) Fetch(keys ...string) ([]Object, error) {
	if s.OnDemand != nil {
		return s.fetchOnDemand(slices.Clone(keys)) // (a copy: the caller's keys stay its own)
	}
	if len(keys) == 0 {
		return s.objects, nil
	}
	if s.keyOrdered {
		return s.fetchByKey(keys), nil
	}
	return s.fetchIndexed(keys, indexKey(keys)), nil
}

// FetchIndexed is Fetch with IndexKey(keys) as ikey, for a reader that made it
// already.
func (s *Store) FetchIndexed(keys []string, ikey string) ([]Object, error) {
	if s.OnDemand != nil || len(keys) == 0 || s.keyOrdered {
		return s.Fetch(keys...)
	}
	return s.fetchIndexed(keys, ikey), nil
}

// fetchIndexed is Fetch of a store that is not key-ordered.
func (s *Store) fetchIndexed(keys []string, ikey string) []Object {
	switch n := s.indexLen(); {
	case len(keys) == n:
		return view(s.index.get(ikey))
	case len(keys) < n:
		return view(s.prefixes.get(ikey, func() []Object {
			var out []Object
			for _, o := range s.objects {
				if slices.Equal(s.indexValues(o.Raw)[:len(keys)], keys) {
					out = append(out, o)
				}
			}
			return out
		}))
	}
	return []Object{}
}

// view is objs as an answer: never nil, and full, so that an append copies.
func view(objs []Object) []Object {
	if objs == nil {
		return []Object{}
	}
	return objs[:len(objs):len(objs)]
}

// fetchByKey is Fetch of a key-ordered store: the objects of a namespace, or the
// object of a namespace and name, are a run of the sorted objects.
func (s *Store) fetchByKey(keys []string) []Object {
	n := len(s.objects)
	switch len(keys) {
	case 1:
		lo := sort.Search(n, func(i int) bool { return s.objects[i].Namespace >= keys[0] })
		hi := sort.Search(n, func(i int) bool { return s.objects[i].Namespace > keys[0] })
		return view(s.objects[lo:hi])
	case 2:
		if i, ok := s.find(keys[0], keys[1]); ok {
			return view(s.objects[i : i+1])
		}
	}
	return []Object{}
}

// fetchOnDemand is Fetch of an on-demand store (keys its own).
func (s *Store) fetchOnDemand(keys []string) ([]Object, error) {
	objs, err := s.OnDemand.Fetch(keys...)
	if err != nil {
		return nil, fmt.Errorf("fetch %s %v: %w", s.Name, keys, err)
	}
	return objs, nil
}

// GetSingle returns the one object matching keys; more than one match is an error.
func (s *Store) GetSingle(keys ...string) (Object, bool, error) {
	objs, err := s.Fetch(keys...)
	if err != nil {
		return Object{}, false, err
	}
	switch len(objs) {
	case 0:
		return Object{}, false, nil
	case 1:
		return objs[0], true, nil
	default:
		return Object{}, false, fmt.Errorf("%s: %d objects match %v, expected at most one", s.Name, len(objs), slices.Clone(keys))
	}
}

// Snapshot is every watched resource's store, by watched resource name.
type Snapshot struct {
	Stores map[string]*Store
}

// Names returns the store names, sorted.
func (s *Snapshot) Names() []string {
	names := make([]string, 0, len(s.Stores))
	for n := range s.Stores {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LeftOut lists every refused object of every store, in store-name order.
func (s *Snapshot) LeftOut() []LeftOut {
	var out []LeftOut
	for _, n := range s.Names() {
		for _, o := range s.Stores[n].refused {
			out = append(out, LeftOut{Resource: n, Key: o.Key(), Reason: o.Refused})
		}
	}
	return out
}

// Object returns the object (held or refused) named by ref.
func (s *Snapshot) Object(ref Ref) (Object, bool) {
	if s == nil {
		return Object{}, false
	}
	st := s.Stores[ref.Resource]
	if st == nil {
		return Object{}, false
	}
	for _, list := range [][]Object{st.objects, st.refused} {
		i := sort.Search(len(list), func(i int) bool { return list[i].Key() >= ref.Key })
		if i < len(list) && list[i].Key() == ref.Key {
			return list[i], true
		}
	}
	return Object{}, false
}

// Without returns a snapshot in which the named objects are not held; stores that
// lose nothing are shared.
func (s *Snapshot) Without(refs ...Ref) *Snapshot { return s.Revert(nil, refs...) }

// Revert returns a snapshot in which each named object is held as prev holds it:
// its earlier version, or not at all when prev (which may be nil) does not hold it.
// A refused object of s under that name is dropped too. Stores that change nothing
// are shared.
func (s *Snapshot) Revert(prev *Snapshot, refs ...Ref) *Snapshot {
	drop := map[string]map[string]bool{}
	for _, r := range refs {
		if drop[r.Resource] == nil {
			drop[r.Resource] = map[string]bool{}
		}
		drop[r.Resource][r.Key] = true
	}
	out := &Snapshot{Stores: make(map[string]*Store, len(s.Stores))}
	for name, st := range s.Stores {
		keys := drop[name]
		if len(keys) == 0 {
			out.Stores[name] = st
			continue
		}
		keep := make([]Object, 0, len(st.objects)+len(st.refused))
		var gone, came []Object
		for li, list := range [][]Object{st.objects, st.refused} {
			for _, o := range list {
				if !keys[o.Key()] {
					keep = append(keep, o)
				} else if li == 0 {
					gone = append(gone, o)
				}
			}
		}
		if prev != nil {
			for key := range keys {
				if o, ok := prev.Object(Ref{Resource: name, Key: key}); ok && o.Refused == "" {
					keep = append(keep, o)
					came = append(came, o)
				}
			}
		}
		ns := NewStore(st.Name, st.IndexBy, st.Type, keep)
		ns.OnDemand = st.OnDemand
		ns.madeFrom(st, gone, came)
		out.Stores[name] = ns
	}
	return out
}

// Changed lists the held objects of s that are not in prev, or are there as another
// version (objects are immutable, so a changed object is a different Raw map). A
// store s shares with prev holds no changes.
func (s *Snapshot) Changed(prev *Snapshot) []Ref {
	var out []Ref
	for _, name := range s.Names() {
		st := s.Stores[name]
		old := prev.Stores[name]
		if old == st {
			continue
		}
		_, came := st.Diff(old)
		for _, o := range came {
			out = append(out, Ref{Resource: name, Key: o.Key()})
		}
	}
	return out
}

// DiffObjects compares two lists sorted by namespace and name (a store's List or
// Refused): gone are the objects of old that now lacks or holds another version of
// (another Raw), came those of now that old lacks or held another version of. One
// walk, no map: a change costs a compare per object, not a key and a map entry.
func DiffObjects(old, now []Object) (gone, came []Object) {
	i, j := 0, 0
	for i < len(old) || j < len(now) {
		// the same version under the same key: most objects, told without a compare
		for i < len(old) && j < len(now) && old[i].SameVersion(now[j]) {
			i++
			j++
		}
		if i == len(old) && j == len(now) {
			break
		}
		switch {
		case j == len(now) || (i < len(old) && less(old[i], now[j])):
			gone = append(gone, old[i])
			i++
		case i == len(old) || less(now[j], old[i]):
			came = append(came, now[j])
			j++
		default:
			if !old[i].SameVersion(now[j]) {
				gone, came = append(gone, old[i]), append(came, now[j])
			}
			i++
			j++
		}
	}
	return gone, came
}
