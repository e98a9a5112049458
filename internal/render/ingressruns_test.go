package render

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// randomFragment is a run's merged fragment: keyed host, path, flag and rule lines
// drawn from small sets (so that runs share keys, mostly with the same value, now
// and then with another), unkeyed notes and a backend.
func randomFragment(rng *rand.Rand, keys int) map[string][]any {
	f := map[string][]any{}
	add := func(list, key string, v any) {
		for i := 0; i+1 < len(f[list]); i += 2 {
			if key != "" && f[list][i] == key {
				return // a run's own merge keeps a key once
			}
		}
		f[list] = append(f[list], key, v)
	}
	for range 1 + rng.IntN(5) {
		k := rng.IntN(keys)
		v := k
		if rng.IntN(50) == 0 {
			v = k + 1 // another value for the key
		}
		host := fmt.Sprintf("h%d.example.com", k)
		add("hosts", host, fmt.Sprintf("%s %s", host, host))
		add("exact", host+"/e", fmt.Sprintf("%s/e be%d", host, v))
		add("prefix", host+"/", fmt.Sprintf("%06d %s/ be%d", 199999-len(host), host, v))
		add("flags", fmt.Sprintf("be%d", v%7), fmt.Sprintf("be%d ,f%d,", v%7, v%7))
		add("rules", fmt.Sprintf("q x-%d", k%3), fmt.Sprintf("q x-%d\x00http-request set-header x-%d v", k%3, k%3))
		add("notes", "", fmt.Sprintf("note %d", k))
		add("backends", fmt.Sprintf("be%d", v), &IngressBackend{Name: fmt.Sprintf("be%d", v)})
	}
	if rng.IntN(20) == 0 {
		add("headers", "", "unkeyed x") // the same unkeyed line in several runs
	}
	return f
}

// TestIngressMergeRunsIsMerge: after any sequence of run lists, ingress_merge_runs
// gives what merge_fragments and sorting give, and the text of those lines.
func TestIngressMergeRunsIsMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	e := &Engine{st: &renderState{kept: &libraryCaches{}}}
	var runs []map[string][]any
	keys := 300
	kept, inRow := 0, 0 // steps that used the kept lists; that took the backends in a row
	for step := range 6000 {
		if step == 3000 {
			keys, runs = 30000, nil
		}
		switch n := rng.IntN(100); {
		case n < 40 || len(runs) == 0:
			runs = append(runs, randomFragment(rng, keys))
		case n < 65:
			runs[rng.IntN(len(runs))] = randomFragment(rng, keys)
		case n < 90:
			i := rng.IntN(len(runs))
			runs = append(runs[:i:i], runs[i+1:]...)
		case n < 91:
			runs = nil
		}
		got := e.ingressMergeRuns(runs...)
		if k := e.st.kept.ingress; k.keys != nil {
			kept++
			if len(runs) > 1 && k.repeated["backends"] == 0 {
				inRow++
			}
		}
		full := mergeFragments(runs)
		for name, sep := range ingressSorted {
			lines := sortStrings(stringsOf(full[name]))
			var want []string
			for _, l := range lines {
				if sep == "" {
					want = append(want, l)
				} else if _, after, ok := strings.Cut(l, sep); ok {
					want = append(want, after)
				}
			}
			if g := got["text"].(map[string]bundle.Text)[name].String(); g != textOf(want) {
				t.Fatalf("step %d, %d runs: text of %s: got %q, want %q", step, len(runs), name, g, textOf(want))
			}
			delete(full, name)
		}
		if g, want := got["backends"].([]*IngressBackend), ingressBackendsOf(full["backends"]); !reflect.DeepEqual(g, want) && len(g)+len(want) > 0 {
			t.Fatalf("step %d, %d runs: backends %v, want %v", step, len(runs), g, want)
		}
		delete(full, "backends")
		if g := got["merged"].(map[string][]any); !reflect.DeepEqual(emptyLists(g), emptyLists(full)) {
			t.Fatalf("step %d: merged lists differ:\ngot  %v\nwant %v", step, g, full)
		}
	}
	if kept < 3000 || inRow < 1000 {
		t.Fatalf("the kept lists were used in %d of 6,000 steps, the backends taken in a row in %d: the comparison proves little", kept, inRow)
	}
}

// emptyLists drops empty lists (a template cannot tell them from missing ones).
func emptyLists(m map[string][]any) map[string][]any {
	out := map[string][]any{}
	for k, v := range m {
		if len(v) > 0 {
			out[k] = v
		}
	}
	return out
}
