package render

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// randomRun is a run's merged state with keyed lines, hosts, header lines and a
// backend with its notes, drawn from small sets so that runs share hosts and, now and then, a key.
func randomRun(rng *rand.Rand, routes int) *GatewayState {
	r := &GatewayState{Hosts: map[string]bool{}, PrefixCondHosts: map[string]bool{}}
	for range 1 + rng.IntN(4) {
		route := rng.IntN(routes)
		host := fmt.Sprintf("@gw:80/h%d.example.com", rng.IntN(60))
		r.Hosts[host] = true
		key := fmt.Sprintf("%s/r%d", host, route)
		switch rng.IntN(3) {
		case 0:
			r.Exact = append(r.Exact, key+"\x00"+key+" MULTI:@h/"+fmt.Sprint(route))
		case 1:
			r.PrefixExact = append(r.PrefixExact, key+"\x00"+key+" @h/"+fmt.Sprint(route))
		default:
			r.PrefixSorted = append(r.PrefixSorted, "p "+key+"\x00"+fmt.Sprintf("%07d", 1000-len(key))+key+"/ @h/"+fmt.Sprint(route))
			r.PlainPrefixes = append(r.PlainPrefixes, [2]string{host, "/r" + fmt.Sprint(route)})
		}
		r.HeaderLines = append(r.HeaderLines, fmt.Sprintf("@h/%d/qa/x-a v%d", route, rng.IntN(3)))
		r.Weighted = append(r.Weighted, fmt.Sprintf("@h/%d 1", route))
	}
	// With 400 routes most backends are in several runs; with 40,000 seldom one.
	backend := fmt.Sprintf("be%d", rng.IntN(routes/40))
	r.Backends = []*GatewayBackend{{Name: backend, Hdr: []string{fmt.Sprintf("@b/%d x", rng.IntN(5))}}}
	r.Notes = []string{fmt.Sprintf("a note %d", rng.IntN(5))}
	return r
}

// TestMergeRunsIsMerge: after any sequence of run lists, gateway_merge_runs gives
// the index gateway_merge gives, whether a key is in two runs or not.
func TestMergeRunsIsMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	e := &Engine{st: &renderState{kept: &libraryCaches{}}}
	var runs []*GatewayState
	routes := 400 // keys collide now and then; with 40,000 seldom
	for step := range 6000 {
		if step == 3000 {
			routes, runs = 40000, nil
		}
		switch n := rng.IntN(100); {
		case n < 40 || len(runs) == 0:
			runs = append(runs, randomRun(rng, routes))
		case n < 65:
			runs[rng.IntN(len(runs))] = randomRun(rng, routes)
		case n < 90:
			i := rng.IntN(len(runs))
			runs = append(runs[:i:i], runs[i+1:]...)
		case n < 91:
			runs = nil // all at once: starts over
		case n < 92: // many new at once: starts over, counting and sorting on every core
			runs = nil
			for range editApartRuns + rng.IntN(40) {
				runs = append(runs, randomRun(rng, routes))
			}
		case n < 96: // another render's state of the same routes
			i := rng.IntN(len(runs))
			runs[i] = copyRun(runs[i])
		}
		incremental, full := &GatewayState{Only: "ns/gw"}, &GatewayState{Only: "ns/gw"}
		e.gatewayMergeRuns(incremental, runs...)
		gatewayMerge(full, runs...)
		got, want := emptyAsNil(gatewayIndex(incremental)), emptyAsNil(gatewayIndex(full))
		if m := incremental.merged; m != nil {
			for i, l := range m.lists {
				if l.text.String() != linesText(l.lines(), listText[i]) {
					t.Fatalf("step %d: the text of sorted list %d is not its lines'", step, i)
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			for k := range want {
				if !reflect.DeepEqual(got[k], want[k]) {
					t.Errorf("step %d, %d runs: %s: got %q, want %q", step, len(runs), k, got[k], want[k])
				}
			}
			t.FailNow()
		}
	}
}

// copyRun is a run state equal to r that shares none of its lines' slices (the
// state another render of the same routes makes).
func copyRun(r *GatewayState) *GatewayState {
	return &GatewayState{Hosts: maps.Clone(r.Hosts), PrefixCondHosts: maps.Clone(r.PrefixCondHosts),
		Exact: slices.Clone(r.Exact), PrefixExact: slices.Clone(r.PrefixExact), PrefixSorted: slices.Clone(r.PrefixSorted),
		PlainPrefixes: slices.Clone(r.PlainPrefixes), HeaderLines: slices.Clone(r.HeaderLines), Weighted: slices.Clone(r.Weighted),
		Backends: slices.Clone(r.Backends), Notes: slices.Clone(r.Notes)}
}

// TestMergeRunsOfTheSameRoutes: runs that bring the lines of the runs they replace
// (admission's render, then the fleet's) leave the maps' texts as they were: the
// same strings, not copies.
func TestMergeRunsOfTheSameRoutes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	e := &Engine{st: &renderState{kept: &libraryCaches{}}}
	var runs []*GatewayState
	for range 50 {
		runs = append(runs, randomRun(rng, 40000))
	}
	texts := func() map[string]bundle.Text {
		s := &GatewayState{Only: "ns/gw"}
		e.gatewayMergeRuns(s, runs...)
		return gatewayIndex(s)["mapText"].(map[string]bundle.Text)
	}
	before := texts()
	m := e.st.kept.runs["ns/gw"]
	lists := m.lists
	runs[7] = copyRun(runs[7])
	after := texts()
	for i, l := range m.lists {
		if len(l.chunks) > 0 && unsafe.SliceData(l.chunks) != unsafe.SliceData(lists[i].chunks) {
			t.Errorf("sorted list %d was copied for runs of the same lines", i)
		}
	}
	for name, text := range before {
		if text.Len() == 0 {
			continue
		}
		if !after[name].Same(text) {
			t.Errorf("mapText %s was built again for runs of the same lines", name)
		}
	}
}

// textOf is lines as map text: each with a newline.
func textOf(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// emptyAsNil makes the index's empty lists nil (templates cannot tell them apart).
func emptyAsNil(idx map[string]any) map[string]any {
	for k, v := range idx {
		if l, ok := v.([]string); ok && len(l) == 0 {
			idx[k] = []string(nil)
		}
	}
	return idx
}

// TestEditSortedIsEdit: on random sorted lists with repeated lines, editSorted is
// taking out one occurrence of each line of out that is there, putting in the lines
// of in, and sorting.
func TestEditSortedIsEdit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	line := func() string { return string(rune('a' + rng.IntN(12))) }
	for range 3000 {
		var list, out, in []string
		for range rng.IntN(20) {
			list = append(list, line())
		}
		sort.Strings(list)
		for range rng.IntN(5) {
			out = append(out, line())
		}
		for range rng.IntN(5) {
			in = append(in, line())
		}
		want, wantFound := slices.Clone(list), true
		for _, l := range out {
			if i := slices.Index(want, l); i >= 0 {
				want = slices.Delete(want, i, i+1)
			} else {
				wantFound = false
			}
		}
		want = append(want, in...)
		sort.Strings(want)
		before := slices.Clone(list)
		got, found := editSorted(list, slices.Clone(out), slices.Clone(in))
		if found != wantFound || !slices.Equal(got, want) || !slices.Equal(list, before) {
			t.Fatalf("editSorted(%q, %q, %q) = %q %v, want %q %v (list now %q)", before, out, in, got, found, want, wantFound, list)
		}
	}
}

func TestEditSorted(t *testing.T) {
	list := []string{"a", "b", "b", "d"}
	got, found := editSorted(list, []string{"b", "d"}, []string{"c", "a"})
	if want := []string{"a", "a", "b", "c"}; !found || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q %v, want %q", got, found, want)
	}
	if _, found := editSorted(list, []string{"x"}, nil); found {
		t.Fatal("a line that is not there was found")
	}
	if list[1] != "b" || list[3] != "d" {
		t.Fatal("the list was edited in place")
	}
}
