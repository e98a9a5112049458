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
