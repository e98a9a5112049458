package render

import (
	"slices"
	"strings"
)

// keyRunsMemo keeps key_runs' last answers between the renders of one extraContext:
// a render after a change asks again for the runs of every Ingress and of every
// backend, mostly the very same keys (the same strings, told apart by a compare
// that stops at their pointers), where hashing each key again grew with the
// objects (a few milliseconds at 50,000).
type keyRunsMemo struct {
	entries [4]keyRunsEntry
	next    int
}

type keyRunsEntry struct {
	keys   []string
	n      int
	starts []int
	// items are what namedRuns last found named keys (nil for keyRunsKept's).
	items any
}

// keyRunsKept is key_runs(keys, n), from the memo when it holds the same keys.
func (e *Engine) keyRunsKept(keys []string, n int) []int {
	m := &e.st.kept.keyRuns
	if starts, ok := m.remembered(n, func(en *keyRunsEntry) bool { return slices.Equal(en.keys, keys) }); ok {
		return starts
	}
	starts, _ := m.remember(slices.Clone(keys), n)
	return starts
}

// namedRuns is key_runs of the names of items (a library's backends, which its
// backends section renders in units of about n). Items named as in a remembered
// answer get it without a list of their names being made (50,000 at 50,000 routes,
// for every render). Items are records made once and never changed (a backend of a
// remembered fragment), mostly the very ones of the render before: those are
// compared at their pointers, without reading each one's name from memory (a cache
// miss each).
func namedRuns[T comparable](e *Engine, items []T, name func(T) string, n int) []int {
	m := &e.st.kept.keyRuns
	if starts, ok := m.remembered(n, func(en *keyRunsEntry) bool {
		if len(en.keys) != len(items) {
			return false
		}
		known, _ := en.items.([]T)
		if len(known) != len(items) {
			known = make([]T, len(items))
			en.items = known
		}
		return namedAs(items, name, en.keys, known)
	}); ok {
		return starts
	}
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = name(it)
	}
	starts, entry := m.remember(names, n)
	entry.items = slices.Clone(items)
	return starts
}

// remembered is a copy of the runs of a remembered answer for n that matches (a
// template may change what it is given).
func (m *keyRunsMemo) remembered(n int, match func(*keyRunsEntry) bool) ([]int, bool) {
	for i := range m.entries {
		if en := &m.entries[i]; en.starts != nil && en.n == n && match(en) {
			return slices.Clone(en.starts), true
		}
	}
	return nil, false
}

// remember is key_runs(keys, n), kept with keys (the memo's from now on) in entry.
func (m *keyRunsMemo) remember(keys []string, n int) (starts []int, entry *keyRunsEntry) {
	starts = keyRuns(keys, n)
	entry = &m.entries[m.next]
	*entry = keyRunsEntry{keys: keys, n: n, starts: slices.Clone(starts)}
	m.next = (m.next + 1) % len(m.entries)
	return starts, entry
}

// namedAs reports whether items are named keys, in order. known are items known to
// be so named, at their places: one that is there is not read (a new one found so
// named takes its place).
func namedAs[T comparable](items []T, name func(T) string, keys []string, known []T) bool {
	for i, it := range items {
		if it == known[i] {
			continue
		}
		if name(it) != keys[i] {
			return false
		}
		known[i] = it
	}
	return true
}

// routeRunsMemo keeps gateway_route_runs' last runs of the route order: an order
// that did not change is mostly the same slices (routeOrder), compared at their
// pointers.
type routeRunsMemo struct {
	order  [][]string
	hashes []uint32 // each route's key's hash (fnv32aJoined), as order
	n      int
	starts []int
	names  []string           // each run's name: its first route's key (routeRunNames)
	prefix string             // the names' prefix
	named  map[*string]string // names by their first route's key (its first part)
}

// routeRuns is keyRuns of the route order (each route's key its parts joined by
// spaces): a route added or taken out changes its own run only, where runs by
// position would all shift after it and be made again.
func (e *Engine) routeRuns(order [][]string, n int) []int {
	m := &e.st.kept.routeRuns
	if m.starts == nil || m.n != n || !slices.EqualFunc(m.order, order, sameKey) {
		m.hashes = keyHashes(m.order, m.hashes, order)
		m.order, m.n = order, n
		if !e.st.kept.order.gave(order) { // (a template may change its own slice)
			m.order = slices.Clone(order)
		}
		m.starts = runStarts(len(order), n, func(i int) uint32 { return m.hashes[i] })
		m.names = nil
	}
	return m.starts
}

// keyHashes are the hashes of order's keys, taken from hashes (those of last) for
// the keys last held too, in the same place or one past it: a route added or taken
// out hashes no other key (hashing 50,000 keys again was 3 ms of a render after a
// route was added).
func keyHashes(last [][]string, hashes []uint32, order [][]string) []uint32 {
	out := make([]uint32, len(order))
	j := 0
	for i, k := range order {
		switch {
		case j < len(last) && sameKey(last[j], k):
			out[i], j = hashes[j], j+1
		case j+1 < len(last) && sameKey(last[j+1], k): // last[j] was taken out
			out[i], j = hashes[j+1], j+2
		default:
			out[i] = fnv32aJoined(k)
		}
	}
	return out
}

// routeRunNames are the names of the runs routeRuns gave last, "<prefix><first
// route's key, its parts joined by spaces>": made when the runs change, not for
// every render, and then taken from the last names where a run starts with the
// same key (780 strings at 50,000 routes, most of them as they were).
func (e *Engine) routeRunNames(prefix string) []string {
	m := &e.st.kept.routeRuns
	if m.names == nil || m.prefix != prefix {
		last := m.named
		if m.prefix != prefix {
			last = nil
		}
		m.names, m.named, m.prefix = make([]string, 0, len(m.starts)), make(map[*string]string, len(m.starts)), prefix
		for b := 0; b+1 < len(m.starts); b++ {
			first := m.order[m.starts[b]]
			var id *string // (nil for an empty key)
			if len(first) > 0 {
				id = &first[0]
			}
			name, ok := last[id]
			if !ok {
				name = prefix + strings.Join(first, " ")
			}
			m.named[id] = name
			m.names = append(m.names, name)
		}
	}
	return m.names
}

// sameKey reports whether two route keys are equal: at once when they are one slice
// (an order that did not change holds the very keys it held).
func sameKey(a, b []string) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true
	}
	return slices.Equal(a, b)
}
