package validate

import (
	"container/list"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// checkKey identifies one `haproxy -c` verdict: the same bundle checked by the same
// binary under the same layout always gets the same answer.
type checkKey struct {
	binary string
	layout bundle.Layout
	hash   string
}

// lru is a small thread-safe least-recently-used cache of check verdicts.
type lru struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recent; values are *lruEntry
	items map[checkKey]*list.Element
}

type lruEntry struct {
	key checkKey
	err error
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), items: map[checkKey]*list.Element{}}
}

// checkCache is shared by every Checker so that the CLI, the runner and the
// controller benefit from each other's checks.
var checkCache = newLRU(128)

// get returns the cached entry for k, or nil.
func (c *lru) get(k checkKey) *lruEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	e := *el.Value.(*lruEntry) // a copy: put may update the entry later
	return &e
}

func (c *lru) put(k checkKey, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		el.Value.(*lruEntry).err = err
		c.order.MoveToFront(el)
		return
	}
	c.items[k] = c.order.PushFront(&lruEntry{key: k, err: err})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry).key)
	}
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
