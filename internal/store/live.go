package store

import (
	"maps"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/fieldpath"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// Live holds the admitted objects of every watched resource while the controller runs
// and hands out snapshots. A snapshot reuses the store of every resource that did not
// change since the previous one, so a change to one EndpointSlice rebuilds one store.
type Live struct {
	b        *Builder
	mu       sync.Mutex
	objects  map[string]map[string]snapshot.Object // resource → namespace/name → object
	stores   map[string]*snapshot.Store
	dirty    map[string]bool
	onDemand map[string]snapshot.Loader
}

// NewLive returns an empty live store for the builder's resources.
func NewLive(b *Builder) *Live {
	l := &Live{b: b, objects: map[string]map[string]snapshot.Object{}, stores: map[string]*snapshot.Store{},
		dirty: map[string]bool{}, onDemand: map[string]snapshot.Loader{}}
	for _, n := range b.Names() {
		l.objects[n] = map[string]snapshot.Object{}
		l.dirty[n] = true
	}
	return l
}

// Builder returns the builder the store admits objects with.
func (l *Live) Builder() *Builder { return l.b }

// SetOnDemand makes a resource's store answer through loader (store: on-demand).
func (l *Live) SetOnDemand(resource string, loader snapshot.Loader) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onDemand[resource] = loader
	l.dirty[resource] = true
}

// Put admits raw (modified in place) and stores it; an object the field selector
// rejects is removed instead. It reports whether the store changed.
func (l *Live) Put(resource string, raw map[string]any) (bool, error) {
	obj, ok, err := l.b.Admit(resource, raw)
	if err != nil {
		return false, err
	}
	if !ok {
		return l.Delete(resource, fieldpath.ObjectKey(raw)), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.objects[resource][obj.Key()] = obj
	l.dirty[resource] = true
	return true, nil
}

// Delete removes an object by namespace/name; it reports whether it was present.
func (l *Live) Delete(resource, key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.objects[resource][key]; !ok {
		return false
	}
	delete(l.objects[resource], key)
	l.dirty[resource] = true
	return true
}

// Len is the number of objects held for a resource.
func (l *Live) Len(resource string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.objects[resource])
}

// Snapshot returns an immutable view of every store.
func (l *Live) Snapshot() *snapshot.Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	snap := &snapshot.Snapshot{Stores: make(map[string]*snapshot.Store, len(l.objects))}
	for name, objs := range l.objects {
		if l.dirty[name] || l.stores[name] == nil {
			list := make([]snapshot.Object, 0, len(objs))
			for _, o := range objs {
				list = append(list, o)
			}
			st := l.b.NewStore(name, list)
			st.OnDemand = l.onDemand[name]
			l.stores[name] = st
			l.dirty[name] = false
		}
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
		var err error
		if obj, keep, err = l.b.Admit(resource, raw); err != nil {
			return nil, err
		}
	}
	l.mu.Lock()
	_, held := l.objects[resource][key]
	if !keep && !held {
		l.mu.Unlock()
		return nil, nil
	}
	list := make([]snapshot.Object, 0, len(l.objects[resource])+1)
	for k, o := range l.objects[resource] {
		if k != key {
			list = append(list, o)
		}
	}
	onDemand := l.onDemand[resource]
	l.mu.Unlock()
	snap := l.Snapshot()
	if keep {
		list = append(list, obj)
	}
	st := l.b.NewStore(resource, list)
	st.OnDemand = onDemand
	out := &snapshot.Snapshot{Stores: maps.Clone(snap.Stores)}
	out.Stores[resource] = st
	return out, nil
}
