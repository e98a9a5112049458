package haproxycheck

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// checkKey identifies one `haproxy -c` verdict: the same bundle checked by the same
// binary under the same layout with the same extra config files (extrasKey: their
// paths, order and contents) always gets the same answer.
type checkKey struct {
	binary string
	layout bundle.Layout
	extras string
	hash   string
}

// lru is a small thread-safe least-recently-used cache of check verdicts. Concurrent
// checks of the same key share one run (parallel tests often render identical
// bundles).
type lru struct {
	mu       sync.Mutex
	max      int
	order    *list.List // front = most recent; values are *lruEntry
	items    map[checkKey]*list.Element
	inflight map[checkKey]*flight
}

// flight is a check in progress that other callers wait for.
type flight struct {
	done      chan struct{}
	err       error
	cacheable bool
}

type lruEntry struct {
	key checkKey
	err error
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), items: map[checkKey]*list.Element{}, inflight: map[checkKey]*flight{}}
}

// do returns the cached verdict for k, waits for a check of k already running, or
// runs check and caches its verdict when cacheable says so. A waiter whose leader got
// an uncacheable result (e.g. the leader's context was cancelled) runs its own check.
func (c *lru) do(ctx context.Context, k checkKey, check func() error, cacheable func(error) bool) error {
	for {
		c.mu.Lock()
		if el, ok := c.items[k]; ok {
			c.order.MoveToFront(el)
			err := el.Value.(*lruEntry).err
			c.mu.Unlock()
			return err
		}
		if f, ok := c.inflight[k]; ok {
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return fmt.Errorf("haproxy -c: %w", ctx.Err())
			}
			if f.cacheable {
				return f.err
			}
			continue
		}
		f := &flight{done: make(chan struct{})}
		c.inflight[k] = f
		c.mu.Unlock()

		f.err = check()
		f.cacheable = cacheable(f.err)
		if f.cacheable {
			c.put(k, f.err)
		}
		c.mu.Lock()
		delete(c.inflight, k)
		c.mu.Unlock()
		close(f.done)
		return f.err
	}
}

// checkCache is shared by every Checker so that the CLI, the runner and the
// controller benefit from each other's checks.
var checkCache = newLRU(128)

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
