package render

import (
	"fmt"
	"slices"
	"testing"
)

// key_runs from the memo answers what keyRuns answers, for the same keys, other keys
// and another n, and what a template does to an answer does not reach the memo.
func TestKeyRunsKept(t *testing.T) {
	e := &Engine{st: &renderState{kept: &libraryCaches{}}}
	keys := make([]string, 500)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/ing-%04d", i)
	}
	fewer := slices.Delete(slices.Clone(keys), 250, 251)
	for round := range 3 {
		for _, c := range []struct {
			keys []string
			n    int
		}{{keys, 64}, {keys, 8}, {fewer, 64}, {slices.Clone(keys), 64}} {
			got := e.keyRunsKept(c.keys, c.n)
			if want := keyRuns(c.keys, c.n); !slices.Equal(got, want) {
				t.Fatalf("round %d, %d keys, n %d: %v, want %v", round, len(c.keys), c.n, got, want)
			}
			got[0] = -1
		}
	}
}
