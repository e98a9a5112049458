package bundle

import (
	"slices"
	"sync"
	"unsafe"
	"weak"
)

// hashCacheMin is the size from which HashContent remembers a hash: below it,
// hashing costs less than the lookup.
const hashCacheMin = 32 << 10

// hashCacheSize bounds the remembered hashes (a render's large files, a few
// times over).
const hashCacheSize = 64

// hashes remembers the hashes of large contents by the identity of their bytes.
// Strings are immutable, so the same bytes at the same length are the same
// content; the bytes are held weakly, and a weak pointer never equals one made
// after its object was freed, so a reused address cannot match an old entry.
var hashes = newBoundedCache[contentID, *hashEntry](hashCacheSize)

type hashEntry struct {
	hash   string
	chunks []chunkSum // (chunks.go)
}

type contentID struct {
	data  weak.Pointer[byte]
	split weak.Pointer[pieces] // a Text in pieces
	len   int
}

// SameString reports whether a and b are one string (the same bytes at the same
// length), without reading them: a compare of two large equal texts is a scan.
func SameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

func idOf(s string) contentID {
	return contentID{data: weak.Make(unsafe.StringData(s)), len: len(s)}
}

// boundedCache is a map of at most size entries that forgets the oldest first.
type boundedCache[K comparable, V any] struct {
	mu    sync.Mutex
	size  int
	byKey map[K]V
	order []K // oldest first
}

func newBoundedCache[K comparable, V any](size int) *boundedCache[K, V] {
	return &boundedCache[K, V]{size: size, byKey: make(map[K]V, size)}
}

func (c *boundedCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byKey[k]
	return v, ok
}

// put keeps the first value put under a key.
func (c *boundedCache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok {
		return
	}
	if len(c.order) == c.size {
		delete(c.byKey, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
	}
	c.byKey[k] = v
	c.order = append(c.order, k)
}
