package render

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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

// The runs of a route order are key_runs of its keys joined by spaces, kept while
// the order is the same, and a route added amid the others changes its own run only.
func TestRouteRuns(t *testing.T) {
	var order [][]string
	for i := range 2000 {
		order = append(order, []string{"HTTPRoute", "ns", fmt.Sprintf("route-%d", i)})
	}
	e := &Engine{st: &renderState{kept: &libraryCaches{}}}
	joined := func(o [][]string) []string {
		out := make([]string, len(o))
		for i, k := range o {
			out[i] = strings.Join(k, " ")
		}
		return out
	}
	got := e.routeRuns(order, 64)
	if want := keyRuns(joined(order), 64); !slices.Equal(got, want) {
		t.Fatalf("routeRuns = %v, want key_runs %v", got, want)
	}
	if again := e.routeRuns(slices.Clone(order), 64); !slices.Equal(again, got) {
		t.Fatalf("the same order gave %v, then %v", got, again)
	}
	added := slices.Insert(slices.Clone(order), 1000, []string{"HTTPRoute", "ns", "route-added"})
	after := e.routeRuns(added, 64)
	if want := keyRuns(joined(added), 64); !slices.Equal(after, want) {
		t.Fatalf("after an insert: routeRuns = %v, want key_runs %v", after, want)
	}
	changed := 0
	for _, start := range after {
		if !slices.Contains(got, start) && !slices.Contains(got, start-1) {
			changed++
		}
	}
	if changed > 1 {
		t.Errorf("a route added amid 2,000 moved %d run starts", changed)
	}
}

// Route runs stay key_runs of the order over random edits (routes added, taken out,
// replaced by an equal key of another slice, the order rebuilt), while the keys'
// hashes are taken from the last order where it held the very key.
func TestRouteRunsOverEdits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var order [][]string
	for i := range 500 {
		order = append(order, []string{"HTTPRoute", "ns", fmt.Sprintf("route-%d", i)})
	}
	e := &Engine{st: &renderState{kept: &libraryCaches{}}}
	next := 500
	for step := range 400 {
		order = slices.Clone(order)
		for range 1 + rng.IntN(3) {
			switch i := rng.IntN(len(order)); rng.IntN(4) {
			case 0:
				order = slices.Insert(order, i, []string{"HTTPRoute", "ns", fmt.Sprintf("route-%d", next)})
				next++
			case 1:
				order = slices.Delete(order, i, i+1)
			case 2:
				order[i] = slices.Clone(order[i]) // equal, not the same slice
			default:
				order[i] = []string{"GRPCRoute", "ns", fmt.Sprintf("route-%d", next)}
				next++
			}
		}
		joined := make([]string, len(order))
		for i, k := range order {
			joined[i] = strings.Join(k, " ")
		}
		if got, want := e.routeRuns(order, 16), keyRuns(joined, 16); !slices.Equal(got, want) {
			t.Fatalf("step %d: routeRuns = %v, want key_runs %v", step, got, want)
		}
	}
}
