package plan

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/bundle/bundletest"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// randomMap writes lines of keys from a small set (so that duplicates happen),
// with comments, blank lines and blanks around keys.
func randomMap(r *rand.Rand, lines int) string {
	var b strings.Builder
	for range lines {
		switch r.IntN(12) {
		case 0:
			b.WriteString("# note\n")
		case 1:
			b.WriteString("\n")
		case 2:
			fmt.Fprintf(&b, "  k%d\tv%d  \n", r.IntN(40), r.IntN(3))
		default:
			fmt.Fprintf(&b, "k%d v%d\n", r.IntN(40), r.IntN(3))
		}
	}
	return b.String()
}

// editMap changes a few lines of text: inserts, deletes and rewrites.
func editMap(r *rand.Rand, text string) string {
	lines := strings.SplitAfter(text, "\n")
	for range 1 + r.IntN(3) {
		i := r.IntN(len(lines) + 1)
		line := randomMap(r, 1)
		switch r.IntN(3) {
		case 0:
			lines = slices.Insert(lines, i, line)
		case 1:
			if i < len(lines) {
				lines = slices.Delete(lines, i, i+1)
			}
		default:
			if i < len(lines) {
				lines[i] = line
			}
		}
	}
	return strings.Join(lines, "")
}

// firstPrefix is what map_beg answers for s: the value of the first entry whose
// key begins s.
func firstPrefix(entries []runtime.MapEntry, s string) string {
	for _, e := range entries {
		if strings.HasPrefix(s, e.Key) {
			return e.Value
		}
	}
	return "(none)"
}

// applyOps runs the plan's map operations on entries the way HAProxy does.
func applyOps(entries []runtime.MapEntry, ops []runtime.Op) []runtime.MapEntry {
	out := slices.Clone(entries)
	for _, op := range ops {
		switch o := op.Operation.(type) {
		case *runtime.AddMap:
			out = append(out, runtime.MapEntry{Key: o.Key, Value: o.Value})
		case *runtime.SetMap:
			for i := range out {
				if out[i].Key == o.Key {
					out[i].Value = o.Value
				}
			}
		case *runtime.DelMap:
			out = slices.DeleteFunc(out, func(e runtime.MapEntry) bool { return e.Key == o.Key })
		case *runtime.ReplaceMap:
			out = slices.Clone(o.Entries)
		}
	}
	return out
}

// TestMapChangeIsAFullParse: the desired map derived from the running one's parse
// is the full parse of its text, remembered or not, and the plan's operations turn
// the running map into one that answers every exact lookup as the desired does.
func TestMapChangeIsAFullParse(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	exact := "frontend f\n    use_backend %[req.hdr(host),map(/etc/haproxy/maps/m.map)]\n"
	beg := "frontend f\n    use_backend %[path,map_beg(/etc/haproxy/maps/m.map)]\n"
	for i := range 6000 {
		cfg := exact
		if i%3 == 0 {
			cfg = beg
		}
		oldText := randomMap(r, r.IntN(30))
		if r.IntN(5) == 0 {
			oldText = strings.TrimSuffix(oldText, "\n")
		}
		newText := editMap(r, oldText)
		old := bundle.File{Kind: bundle.KindMap, Name: "m.map", Content: textIn(r, oldText)}
		cur := bundle.File{Kind: bundle.KindMap, Name: "m.map", Content: textIn(r, newText)}
		if i%2 == 0 { // the desired map remembered
			parsedMaps.parse(cur)
		}
		c := parsedMaps.change(old, cur)
		want := parseMap(bundle.TextOf(newText))
		if !slices.Equal(offsets(c.cur.at), offsets(want.at)) || c.cur.dup != want.dup || !c.cur.text.Equal(want.text) ||
			!slices.Equal(want.entries(0, want.len()), runtime.ParseMapFile(newText)) {
			t.Fatalf("%q → %q: derived %+v, parsed %+v", oldText, newText, c.cur, want)
		}
		wantEntries := want.entries(0, want.len())
		for _, e := range append(runtime.ParseMapFile(oldText), wantEntries...) {
			if c.cur.keys.has(e.Key) != want.keys.has(e.Key) {
				t.Fatalf("%q → %q: key %q: derived %v, parsed %v", oldText, newText, e.Key, c.cur.keys.has(e.Key), want.keys.has(e.Key))
			}
		}
		if !slices.Equal(c.old.entries(0, c.prefixN), c.cur.entries(0, c.prefixN)) ||
			!slices.Equal(c.old.entries(c.old.len()-c.suffixN, c.old.len()), c.cur.entries(c.cur.len()-c.suffixN, c.cur.len())) {
			t.Fatalf("%q → %q: common entries differ", oldText, newText)
		}
		if oldText == newText {
			continue
		}
		res := Plan(Running{Bundle: bundleOf(cfg, "map:m.map", oldText)}, bundleOf(cfg, "map:m.map", newText), caps26)
		if res.Reload && !slices.ContainsFunc(wantEntries, func(e runtime.MapEntry) bool { return strings.Contains(e.Value, "\t") }) {
			t.Fatalf("%q → %q: reload %v", oldText, newText, res.Reasons)
		}
		if res.Reload {
			continue // a value with a tab cannot be sent at runtime
		}
		got := applyOps(runtime.ParseMapFile(oldText), res.Ops)
		gotIdx, _ := indexEntries(got)
		wantIdx, _ := indexEntries(wantEntries)
		if !reflect.DeepEqual(gotIdx, wantIdx) && !(len(gotIdx) == 0 && len(wantIdx) == 0) {
			t.Fatalf("%q → %q: ops %v leave %v, want %v", oldText, newText, res.Ops, gotIdx, wantIdx)
		}
		if cfg == beg {
			for k := range wantIdx {
				for _, probe := range []string{k, k + "0", k[:len(k)-1]} {
					if g, w := firstPrefix(got, probe), firstPrefix(wantEntries, probe); g != w {
						t.Fatalf("%q → %q: ops %v answer %q with %q, the desired map with %q", oldText, newText, res.Ops, probe, g, w)
					}
				}
			}
		}
	}
}

// TestMapChangeChains: maps derived from derived maps (each plan's running map is
// the last one's desired) keep their keys right along the chain and past its cut.
func TestMapChangeChains(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 100 {
		text := randomMap(r, 20)
		for step := range 3 * maxKeyDepth {
			next := editMap(r, text)
			c := parsedMaps.change(bundle.File{Kind: bundle.KindMap, Name: "chain.map", Content: bundle.TextOf(text)},
				bundle.File{Kind: bundle.KindMap, Name: "chain.map", Content: bundle.TextOf(next)})
			want := parseMap(bundle.TextOf(next))
			if c.cur.dup != want.dup {
				t.Fatalf("step %d, %q: dup %v, want %v", step, next, c.cur.dup, want.dup)
			}
			if got := c.cur.entries(0, c.cur.len()); !slices.Equal(got, runtime.ParseMapFile(next)) {
				t.Fatalf("step %d: derived entries %q, parsed %q", step, got, runtime.ParseMapFile(next))
			}
			for _, e := range append(runtime.ParseMapFile(text), want.entries(0, want.len())...) {
				if c.cur.keys.has(e.Key) != want.keys.has(e.Key) {
					t.Fatalf("step %d, %q: key %q: %v, want %v", step, next, e.Key, c.cur.keys.has(e.Key), want.keys.has(e.Key))
				}
			}
			text = next
		}
	}
}

// TestMapKeyChainsFlatten: along a long chain of changes of a few keys each, a map
// without repeated keys keeps its keys right as its chain is flattened over the
// first map's set, made anew only once the changes reach a quarter of it.
func TestMapKeyChainsFlatten(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	keys := map[int]bool{}
	text := func() string {
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			fmt.Fprintf(&b, "k%d v%d\n", k, k%3)
		}
		return b.String()
	}
	for len(keys) < 400 {
		keys[r.IntN(100000)] = true
	}
	last, flattened, remade := text(), 0, 0
	ever := maps.Clone(keys) // (keys taken out are asked for too)
	for step := range 40 * maxKeyDepth {
		for range 1 + r.IntN(3) { // a key taken out, one put in
			for k := range keys {
				delete(keys, k)
				break
			}
			k := r.IntN(100000)
			keys[k], ever[k] = true, true
		}
		next := text()
		c := parsedMaps.change(bundle.File{Kind: bundle.KindMap, Name: "flatten.map", Content: bundle.TextOf(last)},
			bundle.File{Kind: bundle.KindMap, Name: "flatten.map", Content: bundle.TextOf(next)})
		want := parseMap(bundle.TextOf(next))
		for k := range ever {
			if key := fmt.Sprint("k", k); c.cur.keys.has(key) != want.keys.has(key) {
				t.Fatalf("step %d: key %q: %v, want %v", step, key, c.cur.keys.has(key), want.keys.has(key))
			}
		}
		switch k := c.cur.keys; {
		case k.own != nil:
			remade++
		case k.depth == 2:
			flattened++
		}
		if c.cur.keys.depth > maxKeyDepth {
			t.Fatalf("step %d: a chain of %d", step, c.cur.keys.depth)
		}
		last = next
	}
	if flattened < 20 || remade == 0 {
		t.Fatalf("flattened %d times, made anew %d", flattened, remade)
	}
}

// longestFirst is a map of keys, sorted longest key first (as map_beg maps are).
func longestFirst(keys map[string]string) string {
	ks := make([]string, 0, len(keys))
	for k := range keys {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "%s %s\n", k, keys[k])
	}
	return b.String()
}

// TestScatteredMapChange: a change whose lines land apart in a map sorted longest
// key first (as map_beg maps are) is planned from its hunks: the operations leave
// a running map that answers every map_beg lookup as the desired map does, and
// added keys that no other key begins or is begun by are single adds, not a
// replace of the map, however far apart they land.
func TestScatteredMapChange(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	beg := "frontend f\n    use_backend %[path,map_beg(/etc/haproxy/maps/p.map)]\n"
	randomKey := func() string {
		var b strings.Builder
		for range 1 + r.IntN(3) {
			fmt.Fprintf(&b, "/%d", r.IntN(12))
		}
		return b.String()
	}
	singles := 0
	for c := range 2000 {
		keys := map[string]string{}
		for range 20 + r.IntN(200) {
			keys[randomKey()] = fmt.Sprintf("b%d", r.IntN(4))
		}
		oldText := longestFirst(keys)
		unrelated := c%8 != 0 // nothing moved, and every added key: no other key begins it or is begun by it
		var added []string
		for range 1 + r.IntN(4) {
			switch r.IntN(4) {
			case 0: // a key of its own, unrelated to all others
				k := fmt.Sprintf("/u%d-%d", c, r.IntN(1000))
				keys[k] = "new"
				added = append(added, k)
			case 1:
				k := randomKey()
				if _, ok := keys[k]; !ok {
					added = append(added, k)
				}
				keys[k] = "new"
			case 2:
				for k := range keys {
					delete(keys, k)
					break
				}
			default:
				for k := range keys {
					keys[k] = "changed"
					break
				}
			}
		}
		newText := longestFirst(keys)
		if c%8 == 0 { // and one line moved: the kept entries out of place
			lines := strings.SplitAfter(newText, "\n")
			lines = lines[:len(lines)-1]
			from, to := r.IntN(len(lines)), r.IntN(len(lines))
			l := lines[from]
			lines = slices.Insert(slices.Delete(lines, from, from+1), to, l)
			newText = strings.Join(lines, "")
		}
		for _, a := range added {
			for k := range keys {
				if k != a && (strings.HasPrefix(k, a) || strings.HasPrefix(a, k)) {
					unrelated = false
				}
			}
		}
		res := Plan(Running{Bundle: bundleOf(beg, "map:p.map", oldText)}, bundleOf(beg, "map:p.map", newText), caps26)
		if res.Reload {
			t.Fatalf("case %d: reload %v", c, res.Reasons)
		}
		replaced := slices.ContainsFunc(res.Ops, func(op runtime.Op) bool { _, ok := op.Operation.(*runtime.ReplaceMap); return ok })
		if unrelated && len(res.Ops) <= MaxSingleMapOps && replaced {
			t.Fatalf("case %d: added %q, related to no key, replace the map", c, added)
		}
		if !replaced {
			singles++
		}
		got, want := applyOps(runtime.ParseMapFile(oldText), res.Ops), runtime.ParseMapFile(newText)
		for _, e := range append(slices.Clone(want), runtime.ParseMapFile(oldText)...) {
			for _, probe := range []string{e.Key, e.Key + "/5", e.Key + "0", e.Key[:len(e.Key)-1]} {
				if g, w := firstPrefix(got, probe), firstPrefix(want, probe); g != w {
					t.Fatalf("case %d: ops %v answer %q with %q, the desired map with %q", c, res.Ops, probe, g, w)
				}
			}
		}
	}
	t.Logf("single operations in %d of 2000 changes", singles)
}

// TestLargeMapChangeHunks: scattered value changes of a 3,000-entry map are diffed
// into hunks while they are single operations; past MaxSingleMapOps the middles
// are one hunk and the map is replaced. Either way the running map answers as the
// desired one.
func TestLargeMapChangeHunks(t *testing.T) {
	beg := "frontend f\n    use_backend %[path,map_beg(/etc/haproxy/maps/l.map)]\n"
	text := func(changed map[int]bool) string {
		var b strings.Builder
		for i := range 3000 {
			v := "b"
			if changed[i] {
				v = "c"
			}
			fmt.Fprintf(&b, "/%04d/ %s%d\n", 3000-i, v, i)
		}
		return b.String()
	}
	for _, n := range []int{60, 150} {
		changed := map[int]bool{}
		for i := range n {
			changed[i*3000/n] = true
		}
		oldText, newText := text(nil), text(changed)
		c := parsedMaps.change(bundle.File{Kind: bundle.KindMap, Name: "l.map", Content: bundle.TextOf(oldText)}, bundle.File{Kind: bundle.KindMap, Name: "l.map", Content: bundle.TextOf(newText)})
		if wantHunks := map[int]int{60: 60, 150: 1}[n]; len(c.hunks) != wantHunks {
			t.Errorf("%d changes: %d hunks, want %d", n, len(c.hunks), wantHunks)
		}
		res := Plan(Running{Bundle: bundleOf(beg, "map:l.map", oldText)}, bundleOf(beg, "map:l.map", newText), caps26)
		replaced := slices.ContainsFunc(res.Ops, func(op runtime.Op) bool { _, ok := op.Operation.(*runtime.ReplaceMap); return ok })
		if res.Reload || replaced != (n > MaxSingleMapOps) || (!replaced && len(res.Ops) != n) {
			t.Errorf("%d changes: reload %v, %d ops, replaced %v", n, res.Reload, len(res.Ops), replaced)
		}
		got, want := applyOps(runtime.ParseMapFile(oldText), res.Ops), runtime.ParseMapFile(newText)
		for _, e := range want {
			if g, w := firstPrefix(got, e.Key+"x"), firstPrefix(want, e.Key+"x"); g != w {
				t.Fatalf("%d changes: %q answers %q, want %q", n, e.Key, g, w)
			}
		}
	}
}

// BenchmarkMapChangeSequence plans a sequence of changes to one 3,000-entry map
// sorted longest key first, each adding two keys that land apart (a probe route's
// two paths): every plan derives the desired map's parse from the running one's.
//
//	go test -run '^$' -bench MapChangeSequence ./internal/plan
func BenchmarkMapChangeSequence(b *testing.B) {
	beg := "frontend f\n    use_backend %[path,map_beg(/etc/haproxy/maps/s.map)]\n"
	keys := map[string]string{}
	for i := range 3000 {
		keys[fmt.Sprintf("@ns/gw:80=%d-route.example.com/%d/", i, i)] = "be"
		keys[fmt.Sprintf("@ns/gw:80=%d-route.example.com/", i)] = "be"
	}
	texts := []string{longestFirst(keys)}
	for i := range 200 {
		keys[fmt.Sprintf("@ns/gw:80=%d-new.example.com/%d/", i, i)] = "be"
		keys[fmt.Sprintf("@ns/gw:80=%d-new.example.com/", i)] = "be"
		texts = append(texts, longestFirst(keys))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%200 == 0 {
			b.StopTimer()
			parsedMaps = &mapParses{byName: map[string][]*parsedMap{}}
			parsedMaps.parse(bundle.File{Kind: bundle.KindMap, Name: "s.map", Content: bundle.TextOf(texts[0])})
			b.StartTimer()
		}
		j := i % 200
		res := Plan(Running{Bundle: bundleOf(beg, "map:s.map", texts[j])}, bundleOf(beg, "map:s.map", texts[j+1]), caps26)
		if res.Reload || len(res.Ops) != 2 {
			b.Fatalf("change %d: reload %v, %d ops", j, res.Reload, len(res.Ops))
		}
	}
}

// TestParseCutsLongLines: a map line longer than HAProxy's read buffer is parsed as
// the pieces HAProxy reads it in, by a full parse and by one derived from a change.
func TestParseCutsLongLines(t *testing.T) {
	long := "long " + strings.Repeat("v", config.MapFileBufSize+10) + " tail\n"
	oldText := "a 1\n" + long + "z 9\n"
	newText := "a 2\n" + long + "z 9\n"
	if got, want := parseMap(bundle.TextOf(newText)).entries(0, parseMap(bundle.TextOf(newText)).len()), runtime.ParseMapFile(newText); !slices.Equal(got, want) {
		t.Fatalf("full parse: %d entries, ParseMapFile %d", len(got), len(want))
	}
	c := parsedMaps.change(bundle.File{Kind: bundle.KindMap, Name: "long.map", Content: bundle.TextOf(oldText)},
		bundle.File{Kind: bundle.KindMap, Name: "long.map", Content: bundle.TextOf(newText)})
	if got, want := c.cur.entries(0, c.cur.len()), runtime.ParseMapFile(newText); !slices.Equal(got, want) || len(want) < 4 {
		t.Fatalf("derived parse: %d entries, ParseMapFile %d (want the long line in pieces)", len(got), len(want))
	}
}

// offsets are every entry's offsets in l.
func offsets(l entryList) []entryAt {
	out := make([]entryAt, l.len())
	for i := range out {
		out[i] = l.get(i)
	}
	return out
}

// A map edited again and again derives each parse from the last one (the pieces
// pile up and are joined past maxPieces): every version's entries are those of a
// parse of its text.
func TestDerivedParsesChain(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pieces := 0
	for run := range 20 {
		name := fmt.Sprintf("chain%d.map", run)
		text := randomMap(r, 40)
		for step := range 300 {
			next := editMap(r, text)
			if run%2 == 0 { // one line put in, as a route's change does: pieces pile up
				lines := strings.SplitAfter(text, "\n")
				i := r.IntN(len(lines))
				next = strings.Join(lines[:i], "") + fmt.Sprintf("n%d-%d v\n", run, step) + strings.Join(lines[i:], "")
			}
			c := parsedMaps.change(bundle.File{Kind: bundle.KindMap, Name: name, Content: bundle.TextOf(text)},
				bundle.File{Kind: bundle.KindMap, Name: name, Content: bundle.TextOf(next)})
			want := parseMap(bundle.TextOf(next))
			if got := offsets(c.cur.at); !slices.Equal(got, offsets(want.at)) {
				t.Fatalf("run %d step %d: %q → %q: derived %v, parsed %v", run, step, text, next, got, offsets(want.at))
			}
			pieces = max(pieces, len(c.cur.at.pieces))
			if len(c.cur.at.pieces) > maxPieces {
				t.Fatalf("run %d step %d: %d pieces", run, step, len(c.cur.at.pieces))
			}
			text = next
		}
	}
	if pieces < maxPieces {
		t.Fatalf("at most %d pieces: the chains never joined theirs", pieces)
	}
}

// textIn is s as a bundle.Text: whole, or in pieces cut at line ends (as a
// rendered map is) or anywhere.
func textIn(r *rand.Rand, s string) bundle.Text {
	switch r.IntN(3) {
	case 0:
		return bundle.TextOf(s)
	case 1:
		return bundletest.CutAtLines(r, s)
	}
	return bundletest.Cut(r, s)
}
