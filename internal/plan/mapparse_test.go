package plan

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
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
	cfg := "frontend f\n    use_backend %[req.hdr(host),map(/etc/haproxy/maps/m.map)]\n"
	for i := range 3000 {
		oldText := randomMap(r, r.IntN(30))
		if r.IntN(5) == 0 {
			oldText = strings.TrimSuffix(oldText, "\n")
		}
		newText := editMap(r, oldText)
		old := bundle.File{Kind: bundle.KindMap, Name: "m.map", Content: oldText}
		cur := bundle.File{Kind: bundle.KindMap, Name: "m.map", Content: newText}
		if i%2 == 0 { // the desired map remembered
			parsedMaps.parse(cur)
		}
		c := parsedMaps.change(old, cur)
		want := parseMap(newText)
		if !reflect.DeepEqual(c.cur, want) && !(len(c.cur.entries) == 0 && len(want.entries) == 0) {
			t.Fatalf("%q → %q: derived %+v, parsed %+v", oldText, newText, c.cur, want)
		}
		if !slices.Equal(c.old.entries[:c.prefixN], c.cur.entries[:c.prefixN]) ||
			!slices.Equal(c.old.entries[len(c.old.entries)-c.suffixN:], c.cur.entries[len(c.cur.entries)-c.suffixN:]) {
			t.Fatalf("%q → %q: common entries differ", oldText, newText)
		}
		if oldText == newText {
			continue
		}
		res := Plan(Running{Bundle: bundleOf(cfg, "map:m.map", oldText)}, bundleOf(cfg, "map:m.map", newText), caps26)
		if res.Reload && !slices.ContainsFunc(want.entries, func(e runtime.MapEntry) bool { return strings.Contains(e.Value, "\t") }) {
			t.Fatalf("%q → %q: reload %v", oldText, newText, res.Reasons)
		}
		if res.Reload {
			continue // a value with a tab cannot be sent at runtime
		}
		got := applyOps(runtime.ParseMapFile(oldText), res.Ops)
		gotIdx, _ := indexEntries(got)
		if !reflect.DeepEqual(gotIdx, want.index) && !(len(gotIdx) == 0 && len(want.index) == 0) {
			t.Fatalf("%q → %q: ops %v leave %v, want %v", oldText, newText, res.Ops, gotIdx, want.index)
		}
	}
}
