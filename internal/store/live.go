package store

import (
	"maps"
	"reflect"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/fieldpath"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// Live holds the admitted objects of every watched resource while the controller runs
// and hands out snapshots. A snapshot reuses the store of every resource that did not
// change since the previous one, so a change to one EndpointSlice rebuilds one store.
type Live struct {
	b  *Builder
	mu sync.Mutex
	// stores are the last store built per resource, and pending the objects stored
	// (nil: deleted) since, by namespace/name: Snapshot makes the next store of both
	// (snapshot.With). The stores are the objects Live holds: a map of every object
	// beside them was a tenth of the controller's heap.
	stores  map[string]*snapshot.Store
	pending map[string]map[string]*snapshot.Object
	// rebuild: the next store of the resource is built whole (its loader changed).
	rebuild  map[string]bool
	onDemand map[string]snapshot.Loader
	rel      map[string]relevance
	// proposed are the objects admission rendered (Proposed), by resource and key,
	// until the watch brings them (see Update).
	proposed map[string]map[string]snapshot.Object
}

// maxProposed bounds the proposed objects remembered per resource: proposals that
// never arrive (refused by another webhook, or by the API server) are forgotten.
const maxProposed = 256

// relevance says which parts of a resource's objects templates can see, beyond what
// the ignored fields already removed.
type relevance struct {
	// status is kept and compared: watchStatus, or the fieldSelector or an indexBy
	// path reads status.
	status bool
	// exact: the fieldSelector or an indexBy path reads server-kept metadata, so
	// every update is admitted.
	exact bool
}

// NewLive returns an empty live store for the builder's resources.
func NewLive(b *Builder) *Live {
	l := &Live{b: b, stores: map[string]*snapshot.Store{}, pending: map[string]map[string]*snapshot.Object{},
		rebuild: map[string]bool{}, onDemand: map[string]snapshot.Loader{}, rel: map[string]relevance{},
		proposed: map[string]map[string]snapshot.Object{}}
	for _, n := range b.Names() {
		l.pending[n] = map[string]*snapshot.Object{}
		l.proposed[n] = map[string]snapshot.Object{}
		l.rel[n] = relevanceOf(b.resources[n])
	}
	return l
}

func relevanceOf(r *Resource) relevance {
	paths := append([]fieldpath.Path(nil), r.IndexBy...)
	if r.Selector != nil {
		paths = append(paths, r.Selector.Path)
	}
	rel := relevance{status: r.Watch.WatchStatus}
	for _, p := range paths {
		switch {
		case len(p.Steps) == 0:
		case p.Steps[0].Key == "status":
			rel.status = true
		case p.Steps[0].Key == "metadata" && len(p.Steps) > 1:
			k := p.Steps[1].Key
			if serverKept(k) || (k == "annotations" && (len(p.Steps) == 2 || p.Steps[2].Key == lastApplied)) {
				rel.exact = true
			}
		}
	}
	return rel
}

// KeepsStatus reports whether templates see the status of resource's objects
// (watchStatus, or the fieldSelector or an indexBy path reads it). Without it, status
// is stripped before objects are stored and status changes trigger nothing.
func (l *Live) KeepsStatus(resource string) bool { return l.rel[resource].status }

// Builder returns the builder the store admits objects with.
func (l *Live) Builder() *Builder { return l.b }

// SetOnDemand makes a resource's store answer through loader (store: on-demand).
func (l *Live) SetOnDemand(resource string, loader snapshot.Loader) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onDemand[resource] = loader
	l.rebuild[resource] = true
}

// Outcome is what Live.Update did with an object.
type Outcome int

const (
	// Ignored: the field selector rejects the object and none was held under its key.
	Ignored Outcome = iota
	// Stored: the object was admitted and stored, new or changed.
	Stored
	// Removed: the field selector rejects the object; the one held under its key
	// was removed.
	Removed
	// Unchanged: the held object has the same relevant content (see Update); nothing
	// was admitted and the store is untouched.
	Unchanged
)

// Put is Update reporting only whether the store changed.
func (l *Live) Put(resource string, raw map[string]any) (bool, error) {
	o, err := l.Update(resource, raw)
	return o == Stored || o == Removed, err
}

// Update admits raw (modified in place: ignored fields and, unless the resource keeps
// it, status are removed) and stores it; an object the field selector rejects is
// removed instead. An object whose relevant content equals the held one's is not
// admitted at all (Unchanged): relevant is everything but status (unless kept) and
// the metadata the API server keeps (resourceVersion, generation, managedFields,
// the last-applied annotation). A held object the screen refused stays refused
// until a relevant change re-admits it. On-demand stores hold metadata only, whose
// resourceVersion is the only sign of a changed body: their updates always count.
//
// An object with the relevant content of one admission rendered (Proposed) is
// stored as that proposed object, not admitted anew: the render after the change
// finds the objects admission's render read, and reuses what it memoized (a
// change renders once, in admission, instead of twice). Its server-kept metadata
// is then as the API server proposed it (no resourceVersion on a create).
func (l *Live) Update(resource string, raw map[string]any) (Outcome, error) {
	rel := l.rel[resource]
	for _, p := range l.b.ignore {
		p.Delete(raw)
	}
	if !rel.status {
		stripStatus(raw)
	}
	if !rel.exact {
		key := fieldpath.ObjectKey(raw)
		l.mu.Lock()
		held, ok := l.held(resource, key)
		onDemand := l.onDemand[resource] != nil
		proposed, wasProposed := l.proposed[resource][key]
		delete(l.proposed[resource], key)
		l.mu.Unlock()
		// Held and proposed objects are never modified, and updates of one resource
		// come one at a time (one informer), so comparing outside the lock is safe.
		if ok && !onDemand && sameContent(held.Raw, raw, rel.status) {
			return Unchanged, nil
		}
		if wasProposed && !onDemand && sameContent(proposed.Raw, raw, rel.status) {
			l.store(resource, proposed)
			return Stored, nil
		}
	}
	obj, ok, err := l.b.Admit(resource, raw)
	if err != nil {
		return Ignored, err
	}
	if !ok {
		if l.Delete(resource, fieldpath.ObjectKey(raw)) {
			return Removed, nil
		}
		return Ignored, nil
	}
	l.store(resource, obj)
	return Stored, nil
}

func (l *Live) store(resource string, obj snapshot.Object) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[resource][obj.Key()] = &obj
}

// held is the object held under key: stored since the last store was built, or
// in it. Under l.mu.
func (l *Live) held(resource, key string) (snapshot.Object, bool) {
	if o, ok := l.pending[resource][key]; ok {
		if o == nil {
			return snapshot.Object{}, false
		}
		return *o, true
	}
	if st := l.stores[resource]; st != nil {
		return st.Get(key)
	}
	return snapshot.Object{}, false
}

// stripStatus removes an object's status; an object without one is not written to
// (it may be shared with an informer's cache).
func stripStatus(raw map[string]any) {
	if _, ok := raw["status"]; ok {
		delete(raw, "status")
	}
}

// Delete removes an object by namespace/name; it reports whether it was present.
func (l *Live) Delete(resource, key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held(resource, key); !ok {
		return false
	}
	l.pending[resource][key] = nil
	return true
}

// Len is the number of objects held for a resource.
func (l *Live) Len(resource string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	st := l.stores[resource]
	if st != nil {
		n = st.Len() + len(st.Refused())
	}
	for k, o := range l.pending[resource] {
		before := false
		if st != nil {
			_, before = st.Get(k)
		}
		switch {
		case o != nil && !before:
			n++
		case o == nil && before:
			n--
		}
	}
	return n
}

// Snapshot returns an immutable view of every store.
func (l *Live) Snapshot() *snapshot.Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	snap := &snapshot.Snapshot{Stores: make(map[string]*snapshot.Store, len(l.pending))}
	for name, pending := range l.pending {
		switch prev := l.stores[name]; {
		case prev == nil || l.rebuild[name] || len(pending) > prev.Len()/4+1: // most of it: build it whole
			var list []snapshot.Object
			if prev != nil {
				list = make([]snapshot.Object, 0, prev.Len()+len(prev.Refused())+len(pending))
				for _, held := range [][]snapshot.Object{prev.List(), prev.Refused()} {
					for _, o := range held {
						if _, changed := pending[o.Key()]; !changed {
							list = append(list, o)
						}
					}
				}
			}
			for _, o := range pending {
				if o != nil {
					list = append(list, *o)
				}
			}
			st := l.b.NewStore(name, list)
			st.OnDemand = l.onDemand[name]
			l.stores[name] = st
			delete(l.rebuild, name)
		case len(pending) > 0:
			var put []snapshot.Object
			var drop []string
			for k, o := range pending {
				if o != nil {
					put = append(put, *o)
				} else {
					drop = append(drop, k)
				}
			}
			l.stores[name] = prev.With(put, drop)
		}
		clear(pending)
		snap.Stores[name] = l.stores[name]
	}
	return snap
}

// Proposed returns a snapshot in which one object of resource is replaced by raw
// (admitted like Put; modified in place), or removed when raw is nil: what the
// stores would hold if the API server accepted the change. The live stores do not
// change; only resource's store is rebuilt. A nil snapshot means the stores would
// not change (an object the selectors reject, and none under key before).
func (l *Live) Proposed(resource, key string, raw map[string]any) (*snapshot.Snapshot, error) {
	var obj snapshot.Object
	keep := false
	if raw != nil {
		if !l.rel[resource].status {
			stripStatus(raw)
		}
		var err error
		if obj, keep, err = l.b.Admit(resource, raw); err != nil {
			return nil, err
		}
	}
	l.mu.Lock()
	_, held := l.held(resource, key)
	if keep && obj.Refused == "" && !l.rel[resource].exact {
		if len(l.proposed[resource]) >= maxProposed {
			clear(l.proposed[resource])
		}
		l.proposed[resource][obj.Key()] = obj
	}
	l.mu.Unlock()
	if !keep && !held {
		return nil, nil
	}
	snap := l.Snapshot()
	var put []snapshot.Object
	if keep {
		put = []snapshot.Object{obj}
	}
	st := snap.Stores[resource].With(put, []string{key})
	out := &snapshot.Snapshot{Stores: maps.Clone(snap.Stores)}
	out.Stores[resource] = st
	return out, nil
}

// The last-applied annotation kubectl keeps: a copy of the object, never relevant.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// serverKept reports whether a metadata key is bookkeeping of the API server that no
// update is made for.
func serverKept(key string) bool {
	return key == "resourceVersion" || key == "generation" || key == "managedFields"
}

// sameContent reports whether two objects are equal but for status (unless status is
// set) and server-kept metadata. It copies nothing.
func sameContent(a, b map[string]any, status bool) bool {
	return equalExcept(a, b, func(k string) bool { return k == "status" && !status }, func(k string, x, y any) bool {
		if k != "metadata" {
			return equalJSON(x, y)
		}
		ma, okA := x.(map[string]any)
		mb, okB := y.(map[string]any)
		if !okA || !okB {
			return equalJSON(x, y)
		}
		if !equalExcept(ma, mb, func(k string) bool { return serverKept(k) || k == "annotations" }, equalValue) {
			return false
		}
		// Absent annotations equal an empty map: removing the last one is no change.
		aa, _ := ma["annotations"].(map[string]any)
		ab, _ := mb["annotations"].(map[string]any)
		return equalExcept(aa, ab, func(k string) bool { return k == lastApplied }, equalValue)
	})
}

func equalValue(_ string, x, y any) bool { return equalJSON(x, y) }

// equalExcept compares two maps key by key, leaving out the keys skip names; same
// compares the values of a key both hold.
func equalExcept(a, b map[string]any, skip func(string) bool, same func(k string, x, y any) bool) bool {
	n := 0
	for k, x := range a {
		if skip(k) {
			continue
		}
		y, ok := b[k]
		if !ok || !same(k, x, y) {
			return false
		}
		n++
	}
	for k := range b {
		if !skip(k) {
			n--
		}
	}
	return n == 0
}

// equalJSON is reflect.DeepEqual for decoded JSON, without reflection on the types
// decoded JSON holds.
func equalJSON(x, y any) bool {
	switch a := x.(type) {
	case string:
		b, ok := y.(string)
		return ok && a == b
	case map[string]any:
		b, ok := y.(map[string]any)
		if !ok || len(a) != len(b) || (a == nil) != (b == nil) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := y.([]any)
		if !ok || len(a) != len(b) || (a == nil) != (b == nil) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	case nil:
		return y == nil
	case bool, int64, float64:
		return x == y // different dynamic types compare unequal, never panic
	}
	return reflect.DeepEqual(x, y)
}
