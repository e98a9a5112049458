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
var hashes = &hashCache{byData: map[contentID]string{}}

type contentID struct {
	data weak.Pointer[byte]
	len  int
}

type hashCache struct {
	mu     sync.Mutex
	byData map[contentID]string
	order  []contentID // oldest first
}

func idOf(s string) contentID {
	return contentID{weak.Make(unsafe.StringData(s)), len(s)}
}

func (c *hashCache) get(s string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.byData[idOf(s)]
	return h, ok
}

func (c *hashCache) put(s string, h string) {
	id := idOf(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byData[id]; ok {
		return
	}
	if len(c.order) == hashCacheSize {
		delete(c.byData, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
	}
	c.byData[id] = h
	c.order = append(c.order, id)
}
