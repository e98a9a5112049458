package render

import (
	"sync"
	"sync/atomic"
	"time"
)

// Shared is the per-render cache templates reach as `shared`. ComputeIfAbsent runs its
// factory exactly once per key and render, even when templates render concurrently;
// there is deliberately no Set, so check-then-act races cannot be written.
//
// A value is a fragment of incremental rendering (memo.go): when nothing its factory
// read changed since an earlier render, that render's value is used instead of running
// the factory. Values must therefore not be modified once returned.
type Shared struct {
	st      *renderState // nil outside a render
	mu      sync.Mutex
	entries map[string]*sharedEntry
	// The time spent in factories (the outermost of nested ones): in all, and per
	// key (under mu). A file's timing tells its own work from the shared work it
	// happened to ask for first.
	depth   atomic.Int32
	took    atomic.Int64
	timings []Timing
}

type sharedEntry struct {
	once  sync.Once
	value any
	err   any
	deps  *deps
}

func newShared(st *renderState) *Shared { return &Shared{st: st, entries: map[string]*sharedEntry{}} }

// ComputeIfAbsent returns the value for key, computing it with fn the first time. The
// second result reports whether this call computed it (or took it from an earlier
// render: the first caller of a render always gets true).
func (s *Shared) ComputeIfAbsent(key string, fn func() any) (any, bool) {
	s.mu.Lock()
	e, ok := s.entries[key]
	if !ok {
		e = &sharedEntry{}
		s.entries[key] = e
	}
	s.mu.Unlock()
	s.asked(key)
	computed := false
	e.once.Do(func() {
		computed = true
		s.compute(key, e, fn)
	})
	if e.err != nil {
		// Every caller sees the factory's failure, not only the first. The value is
		// re-raised as it was: a template's fail() stops the run with a value the
		// template engine must get back unchanged.
		panic(e.err)
	}
	s.used(e)
	return e.value, computed
}

// compute fills e: from an earlier render when what it read is unchanged, else by fn.
func (s *Shared) compute(key string, e *sharedEntry, fn func() any) {
	st := s.st
	if st != nil {
		if m := st.prev.sharedValue(key); m != nil && m.deps.current(st) && st.replay(m.deps, st.files) {
			e.value, e.deps = m.value, m.deps
			st.next.takeShared(st.prev, key, m)
			st.reuse.Shared++
			return
		}
	}
	var rec *recorder
	if st != nil {
		rec = st.rec
	}
	if rec != nil {
		rec.push(&scope{})
		depth := len(rec.stack)
		// The factory's units and values are memoized as its own, not the file's
		// that asked first: kept while the value is reused, whichever files render.
		target := rec.target
		rec.target = sharedTarget(key)
		defer func() {
			rec.target = target
			for len(rec.stack) > depth {
				rec.pop() // units the factory left open
			}
			sc := rec.top()
			rec.stack = rec.stack[:len(rec.stack)-1] // the callers add it (used)
			e.deps = &sc.deps
			if e.err == nil {
				st.next.putShared(key, &sharedMemo{value: e.value, deps: st.made(e.deps)})
				st.reuse.SharedComputed++
			}
		}()
	}
	outer, start := s.depth.Add(1) == 1, time.Now()
	defer func() {
		s.depth.Add(-1)
		if outer {
			took := time.Since(start)
			s.took.Add(int64(took))
			s.mu.Lock()
			s.timings = append(s.timings, Timing{Target: key, Duration: took})
			s.mu.Unlock()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			e.err = r
		}
	}()
	e.value = fn()
}

// sharedTarget is where the units and values the factory of shared value key made
// are memoized.
func sharedTarget(key string) string { return "shared:" + key }

// spent is the time spent in factories so far.
func (s *Shared) spent() time.Duration { return time.Duration(s.took.Load()) }

// used makes the running fragment depend on what e's factory read.
func (s *Shared) used(e *sharedEntry) {
	if s.st != nil && s.st.rec != nil && e.deps != nil {
		s.st.rec.top().deps.add(e.deps)
	}
}

// Get returns the value computed for key, or nil.
func (s *Shared) Get(key string) any {
	s.mu.Lock()
	e, ok := s.entries[key]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	s.asked(key)
	s.used(e)
	return e.value
}

// asked notes that the template being rendered asked for key.
func (s *Shared) asked(key string) {
	if s.st != nil && s.st.rec != nil {
		s.st.rec.asked(key)
	}
}
