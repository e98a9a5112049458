package bundle

import (
	"slices"
	"sync"
)

// commonCacheMin is the size from which CommonLines remembers its answer for a pair
// of texts: a rendered map and its last version are compared by the render's check,
// the plan, the map translation and the agent edit in turn, each a scan of the
// whole map for a change of a few lines.
const commonCacheMin = 32 << 10

// commonCacheSize bounds the remembered pairs (a render's large files, a few times
// over).
const commonCacheSize = 128

// commons remembers CommonLines of pairs of large texts by the identity of their
// bytes, held weakly as the hashes are (hashcache.go): the same bytes at the same
// length are the same content.
var commons = &commonCache{byPair: map[textPair][2]int{}}

type textPair struct{ a, b contentID }

type commonCache struct {
	mu     sync.Mutex
	byPair map[textPair][2]int
	order  []textPair // oldest first
}

// get returns the remembered CommonLines(a, b); the answer is the same for (b, a).
func (c *commonCache) get(a, b string) (prefix, suffix int, ok bool) {
	ia, ib := idOf(a), idOf(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byPair[textPair{ia, ib}]
	if !ok {
		v, ok = c.byPair[textPair{ib, ia}]
	}
	return v[0], v[1], ok
}

func (c *commonCache) put(a, b string, prefix, suffix int) {
	k := textPair{idOf(a), idOf(b)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byPair[k]; ok {
		return
	}
	if len(c.order) == commonCacheSize {
		delete(c.byPair, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
	}
	c.byPair[k] = [2]int{prefix, suffix}
	c.order = append(c.order, k)
}
