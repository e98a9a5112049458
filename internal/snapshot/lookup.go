package snapshot

import (
	"sync"
	"sync/atomic"
)

// keyLookup finds the objects of a key-ordered store version by namespace and name
// in a map, made once the version has been searched often enough to pay for it: a
// full render looks up every Service and Ingress, and each binary search missed the
// cache at most of its steps (half a microsecond at 5,000 objects); the render of
// a change looks up a few, which a map of every object would cost more than it
// saves.
type keyLookup struct {
	searches atomic.Int64
	once     sync.Once
	index    atomic.Pointer[map[string]int32] // by Object.Key
}

// lookupAfter is how many searches of a store version of n objects come before
// its map: an eighth of them (the map costs about as much as n/8 searches), and at
// least 64.
func lookupAfter(n int) int64 { return max(64, int64(n)/8) }

// find is where the object ns/name is in objs (the store version's objects, whose
// keys are keys), or, when it is not there, where it would go.
func (l *keyLookup) find(objs []Object, keys []string, ns, name string) (int, bool) {
	if m := l.index.Load(); m != nil {
		var buf [128]byte // (the key made on the stack: a map read of string(bytes) copies nothing)
		key := buf[:0]
		if ns != "" {
			key = append(append(key, ns...), '/')
		}
		if i, ok := (*m)[string(append(key, name...))]; ok {
			return int(i), true
		}
		return search(objs, ns, name) // (the place it would go)
	}
	if l.searches.Add(1) == lookupAfter(len(objs)) {
		l.once.Do(func() {
			m := make(map[string]int32, len(keys))
			for i, k := range keys {
				m[k] = int32(i)
			}
			l.index.Store(&m)
		})
	}
	return search(objs, ns, name)
}
