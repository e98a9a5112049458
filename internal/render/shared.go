package render

import "sync"

// Shared is the per-render cache templates reach as `shared`. ComputeIfAbsent runs its
// factory exactly once per key and render, even when templates render concurrently;
// there is deliberately no Set, so check-then-act races cannot be written.
type Shared struct {
	mu      sync.Mutex
	entries map[string]*sharedEntry
}

type sharedEntry struct {
	once  sync.Once
	value any
	err   any
}

func newShared() *Shared { return &Shared{entries: map[string]*sharedEntry{}} }

// ComputeIfAbsent returns the value for key, computing it with fn the first time. The
// second result reports whether this call computed it.
func (s *Shared) ComputeIfAbsent(key string, fn func() any) (any, bool) {
	s.mu.Lock()
	e, ok := s.entries[key]
	if !ok {
		e = &sharedEntry{}
		s.entries[key] = e
	}
	s.mu.Unlock()
	computed := false
	e.once.Do(func() {
		computed = true
		defer func() {
			if r := recover(); r != nil {
				e.err = r
			}
		}()
		e.value = fn()
	})
	if e.err != nil {
		// Every caller sees the factory's failure, not only the first. The value is
		// re-raised as it was: a template's fail() stops the run with a value the
		// template engine must get back unchanged.
		panic(e.err)
	}
	return e.value, computed
}

// Get returns the value computed for key, or nil.
func (s *Shared) Get(key string) any {
	s.mu.Lock()
	e, ok := s.entries[key]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	return e.value
}
