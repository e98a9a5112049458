package render

import "slices"

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
}

// keyRunsKept is key_runs(keys, n), from the memo when it holds the same keys.
func (e *Engine) keyRunsKept(keys []string, n int) []int {
	m := &e.st.kept.keyRuns
	for _, en := range m.entries {
		if en.starts != nil && en.n == n && slices.Equal(en.keys, keys) {
			return slices.Clone(en.starts) // (a template may change what it is given)
		}
	}
	starts := keyRuns(keys, n)
	m.entries[m.next] = keyRunsEntry{keys: slices.Clone(keys), n: n, starts: slices.Clone(starts)}
	m.next = (m.next + 1) % len(m.entries)
	return starts
}

// namedRuns is key_runs of the names of items (a library's backends, which its
// backends section renders in units of about n).
func namedRuns[T any](e *Engine, items []T, name func(T) string, n int) []int {
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = name(it)
	}
	return e.keyRunsKept(names, n)
}

// routeRunsMemo keeps gateway_route_runs' last runs of the route order: an order
// that did not change is mostly the same slices (routeOrder), compared at their
// pointers.
type routeRunsMemo struct {
	order  [][]string
	n      int
	starts []int
}

// routeRuns is keyRuns of the route order (each route's key its parts joined by
// spaces): a route added or taken out changes its own run only, where runs by
// position would all shift after it and be made again.
func (e *Engine) routeRuns(order [][]string, n int) []int {
	m := &e.st.kept.routeRuns
	if m.starts == nil || m.n != n || !slices.EqualFunc(m.order, order, sameKey) {
		m.order, m.n = slices.Clone(order), n
		m.starts = runStarts(len(order), n, func(i int) uint32 { return fnv32aJoined(order[i]) })
	}
	return m.starts
}

// sameKey reports whether two route keys are equal: at once when they are one slice
// (an order that did not change holds the very keys it held).
func sameKey(a, b []string) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true
	}
	return slices.Equal(a, b)
}
