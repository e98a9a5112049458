package render

import (
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

var (
	stringSliceType = reflect.TypeOf([]string(nil))
	untypedElemType = reflect.TypeOf(map[string]any(nil))
)

// typedRoot describes the `resources` variable of the typed dialect: a struct with one
// field per watched resource, each a store struct of functions.
type typedRoot struct {
	typ    reflect.Type
	fields []typedField
}

type typedField struct {
	resource string
	elem     reflect.Type // *T for typed resources, map[string]any otherwise
	store    reflect.Type
}

// newTypedRoot builds the root type from the watched resources' struct types; a nil
// type means the resource has no schema.
func newTypedRoot(types map[string]reflect.Type) (*typedRoot, error) {
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	sort.Strings(names)
	root := &typedRoot{}
	var fields []reflect.StructField
	seen := map[string]string{}
	for _, n := range names {
		field := ExportedName(n)
		if field == "" {
			return nil, fmt.Errorf("watched resource %q has no usable field name", n)
		}
		if other, dup := seen[field]; dup {
			return nil, fmt.Errorf("watched resources %q and %q both become resources.%s", other, n, field)
		}
		seen[field] = n
		elem := untypedElemType
		if t := types[n]; t != nil {
			elem = reflect.PointerTo(t)
		}
		store := storeType(elem)
		root.fields = append(root.fields, typedField{resource: n, elem: elem, store: store})
		fields = append(fields, reflect.StructField{Name: field, Type: store})
	}
	root.typ = reflect.StructOf(fields)
	return root, nil
}

// storeType is struct{ List func() []E; Fetch func(...string) []E; GetSingle func(...string) E;
// Keys func() []string }.
func storeType(elem reflect.Type) reflect.Type {
	slice := reflect.SliceOf(elem)
	return reflect.StructOf([]reflect.StructField{
		{Name: "List", Type: reflect.FuncOf(nil, []reflect.Type{slice}, false)},
		{Name: "Fetch", Type: reflect.FuncOf([]reflect.Type{stringSliceType}, []reflect.Type{slice}, true)},
		{Name: "GetSingle", Type: reflect.FuncOf([]reflect.Type{stringSliceType}, []reflect.Type{elem}, true)},
		{Name: "Keys", Type: reflect.TypeOf((func() []string)(nil))},
	})
}

// value builds the static `resources` value; its functions read the snapshot of the
// render in progress through state, and record what they read for incremental renders.
func (r *typedRoot) value(state func() *renderState) reflect.Value {
	root := reflect.New(r.typ).Elem()
	for i, f := range r.fields {
		sv := root.Field(i)
		sv.Field(0).Set(reflect.MakeFunc(f.store.Field(0).Type, func([]reflect.Value) []reflect.Value {
			return []reflect.Value{elemSlice(f.elem, state().list(f.resource))}
		}))
		sv.Field(1).Set(reflect.MakeFunc(f.store.Field(1).Type, func(args []reflect.Value) []reflect.Value {
			return []reflect.Value{elemSlice(f.elem, state().fetch(f.resource, args[0].Interface().([]string)))}
		}))
		sv.Field(2).Set(reflect.MakeFunc(f.store.Field(2).Type, func(args []reflect.Value) []reflect.Value {
			objs := state().getSingle(f.resource, args[0].Interface().([]string))
			if len(objs) == 0 {
				return []reflect.Value{reflect.Zero(f.elem)}
			}
			return []reflect.Value{elemOf(f.elem, objs[0])}
		}))
		sv.Field(3).Set(reflect.ValueOf(func() []string { return state().keys(f.resource) }))
	}
	return root
}

// keys answers a template's Keys(): what List returns, read as List reads it, by
// the store's kept keys.
func (st *renderState) keys(resource string) []string {
	return slices.Clone(st.sharedKeys(resource))
}

// sharedKeys is keys without the copy, for Go helpers that only read them.
func (st *renderState) sharedKeys(resource string) []string {
	st.list(resource)
	if store := st.snapshot.Stores[resource]; store != nil {
		return store.SharedKeys()
	}
	return []string{}
}

func listOf(st *snapshot.Store) []snapshot.Object {
	if st == nil {
		return nil
	}
	return st.List()
}

// list, fetch and getSingle answer a template's store query and record it. fetch and
// getSingle panic on store errors: Scriggo turns a panic in a native call into a
// render error that carries the template position.
func (st *renderState) list(resource string) []snapshot.Object { return st.here().list(resource) }

func (st *renderState) fetch(resource string, keys []string) []snapshot.Object {
	return st.here().fetch(resource, keys)
}

func (st *renderState) getSingle(resource string, keys []string) []snapshot.Object {
	return st.here().getSingle(resource, keys)
}

// here reads for the innermost fragment of the template being rendered.
func (st *renderState) here() reader {
	r := reader{st: st, recent: &st.recent}
	if st.rec != nil {
		r.deps = &st.rec.top().deps
	}
	return r
}

// reader answers the store queries of Go helpers and records each in deps: the
// innermost fragment of the template being rendered (renderState.here), or a
// computation made apart from the template, on a worker (apart.go).
type reader struct {
	st     *renderState
	deps   *deps // nil: not recorded
	recent *recentReads
}

// recentReads are a reader's last recorded queries: one asked again a moment later
// (an Ingress read for its annotations, then its routes; a Service for each
// backendRef of a route) is answered by the same read, recorded again.
type recentReads struct {
	reads [4]recentRead
	next  int
}

// recentRead is a recorded keyed read and its answer.
type recentRead struct {
	r   *read
	got []snapshot.Object
}

func (r reader) list(resource string) []snapshot.Object {
	store := r.st.snapshot.Stores[resource]
	objs := listOf(store)
	r.record(&read{store: resource, list: true, at: store.Weak(), got: objs})
	return objs
}

func (r reader) fetch(resource string, keys []string) []snapshot.Object {
	return r.fetchKeyed(resource, keys, "")
}

// fetchKeyed is fetch with keys' index key ikey, made by the caller when it reads
// several stores by the same keys ("": not made yet).
func (r reader) fetchKeyed(resource string, keys []string, ikey string) []snapshot.Object {
	// the index's key, recorded with the read: compared with the recent reads' before
	// it is made a string (a repeated query makes none)
	var buf [64]byte
	k := append(buf[:0], ikey...)
	if ikey == "" {
		k = snapshot.AppendIndexKey(k, keys)
	}
	store := r.st.snapshot.Stores[resource]
	if store == nil {
		r.record(&read{store: resource, ikey: string(k)})
		return nil
	}
	at := store.Weak() // (weak pointers of one store compare equal: no Value per candidate)
	if store.OnDemand == nil {
		for _, rec := range r.recent.reads {
			if rr := rec.r; rr != nil && rr.store == resource && rr.at == at && rr.ikey == string(k) {
				if r.deps != nil {
					r.deps.addRead(rr)
				}
				return rec.got
			}
		}
	}
	if ikey == "" {
		ikey = string(k)
	}
	objs, err := store.FetchIndexed(keys, ikey)
	if err != nil {
		panic(err)
	}
	rr := keyedRead(resource, ikey, at, objs)
	r.record(rr)
	if r.deps != nil {
		r.recent.reads[r.recent.next] = recentRead{rr, objs}
		r.recent.next = (r.recent.next + 1) % len(r.recent.reads)
	}
	return objs
}

// getSingle is fetch with at most one answer (the store's GetSingle rule).
func (r reader) getSingle(resource string, keys []string) []snapshot.Object {
	return r.getSingleKeyed(resource, keys, "")
}

func (r reader) getSingleKeyed(resource string, keys []string, ikey string) []snapshot.Object {
	objs := r.fetchKeyed(resource, keys, ikey)
	if len(objs) > 1 {
		panic(fmt.Errorf("%s: %d objects match %v, expected at most one", resource, len(objs), slices.Clone(keys)))
	}
	return objs
}

func (r reader) record(rr *read) {
	if r.deps != nil {
		r.deps.addRead(rr)
	}
}

func elemOf(elem reflect.Type, o snapshot.Object) reflect.Value {
	if elem == untypedElemType {
		return reflect.ValueOf(o.Raw)
	}
	if v := o.TypedValue(); v.IsValid() {
		return v
	}
	return reflect.Zero(elem)
}

func elemSlice(elem reflect.Type, objs []snapshot.Object) reflect.Value {
	out := reflect.MakeSlice(reflect.SliceOf(elem), len(objs), len(objs))
	for i, o := range objs {
		out.Index(i).Set(elemOf(elem, o))
	}
	return out
}

// UntypedStore is a watched resource in the untyped dialect: resources["name"].
type UntypedStore struct {
	name  string
	state func() *renderState
}

// List returns every object as decoded JSON.
func (u *UntypedStore) List() []map[string]any { return raws(u.state().list(u.name)) }

// Fetch returns the objects whose index values start with keys.
func (u *UntypedStore) Fetch(keys ...string) []map[string]any {
	return raws(u.state().fetch(u.name, keys))
}

// Keys returns the key ("namespace/name", or "name") of every object, in List's order.
// It reads what List reads: a fragment that loops over the keys and fetches each object
// by them depends on the set of objects and on each object it fetched.
func (u *UntypedStore) Keys() []string { return u.state().keys(u.name) }

// GetSingle returns the one object matching keys, or nil.
func (u *UntypedStore) GetSingle(keys ...string) map[string]any {
	objs := u.state().getSingle(u.name, keys)
	if len(objs) == 0 {
		return nil
	}
	return objs[0].Raw
}

func raws(objs []snapshot.Object) []map[string]any {
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = o.Raw
	}
	return out
}
