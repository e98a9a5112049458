package render

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// Random edits of a sortedText give the text and lines a flat sorted list gives,
// across chunk boundaries, splits and chunks emptied, with repeated lines and lines
// without text; a version edited is left as it was; the text stays in pieces of
// about bundle's size.
func TestSortedTextEditsAsAFlatList(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	start := textAfter(" ")
	line := func() string {
		if rng.IntN(50) == 0 {
			return fmt.Sprintf("nosep%03d", rng.IntN(1000)) // (no text)
		}
		// (long enough that the text is held in pieces: bundle.Text)
		return fmt.Sprintf("%04d %d.example.com gw_namespace_a_service_with_a_long_name_80", rng.IntN(3000), rng.IntN(4))
	}
	var flat []string
	for range 2000 {
		flat = append(flat, line())
	}
	slices.Sort(flat)
	st := sortedText{chunks: chunksOf(slices.Clone(flat), start, chunkLines), text: bundle.TextOf(linesText(flat, start))}
	for step := range 400 {
		var out, in []string
		for range rng.IntN(4) {
			if len(flat) > 0 {
				out = append(out, flat[rng.IntN(len(flat))])
			}
		}
		if step%50 == 0 { // a chunk's worth taken out
			i := rng.IntN(max(1, len(flat)-300))
			out = append(out, flat[i:min(len(flat), i+300)]...)
		}
		for range rng.IntN(4) {
			in = append(in, line())
		}
		if step%70 == 0 { // a chunk's worth put in
			for range 600 {
				in = append(in, line())
			}
		}
		out = dedupeCounts(out, flat)
		want, _ := editSorted(flat, slices.Clone(out), slices.Clone(in))
		before, beforeText := st.lines(), strings.Clone(st.text.String())
		got, found := st.edited(slices.Clone(out), slices.Clone(in), start)
		if !found {
			t.Fatalf("step %d: a line taken out was not found", step)
		}
		if !slices.Equal(st.lines(), before) || st.text.String() != beforeText {
			t.Fatalf("step %d: the edited version changed", step)
		}
		if !slices.Equal(got.lines(), want) {
			t.Fatalf("step %d: lines differ from the flat list's", step)
		}
		if w := linesText(want, start); got.text.String() != w {
			t.Fatalf("step %d: text differs from the flat list's:\n%q\nwant\n%q", step, got.text.String(), w)
		}
		if len(got.text.Parts()) > 4+got.text.Len()/(16<<10) {
			t.Fatalf("step %d: the text is in %d pieces for %d bytes", step, len(got.text.Parts()), got.text.Len())
		}
		for _, c := range got.chunks {
			if len(c.lines) == 0 || len(c.lines) > 2*chunkLines || c.size != textLen(c.lines, start) {
				t.Fatalf("step %d: a chunk of %d lines, size %d", step, len(c.lines), c.size)
			}
		}
		st, flat = got, want
	}
	if _, found := st.edited([]string{"9999 not there"}, nil, start); found {
		t.Fatal("a line not there was found")
	}
	empty, found := sortedText{}.edited(nil, []string{"0002 b", "0001 a"}, start)
	if !found || empty.text.String() != "a\nb\n" {
		t.Fatalf("from nothing: %q, %v", empty.text.String(), found)
	}
}

// dedupeCounts keeps the lines of out that list holds as often as out names them.
func dedupeCounts(out, list []string) []string {
	have := map[string]int{}
	for _, l := range list {
		have[l]++
	}
	var kept []string
	for _, l := range out {
		if have[l] > 0 {
			have[l]--
			kept = append(kept, l)
		}
	}
	return kept
}
