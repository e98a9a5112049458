package store

import (
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
