package agentapi

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/bundle/bundletest"
)

// TestDiffApply: the splices Diff finds turn old into new, for random line
// insertions, deletions and replacements, with and without a final newline.
func TestDiffApply(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 500 {
		var lines []string
		for i := range r.IntN(60) {
			lines = append(lines, fmt.Sprintf("key%d v%d\n", i, r.IntN(3)))
		}
		old := strings.Join(lines, "")
		next := append([]string(nil), lines...)
		for range r.IntN(6) {
			i := r.IntN(len(next) + 1)
			switch r.IntN(3) {
			case 0:
				next = append(next[:i], append([]string{fmt.Sprintf("new%d x\n", r.IntN(1000))}, next[i:]...)...)
			case 1:
				if i < len(next) {
					next = append(next[:i], next[i+1:]...)
				}
			case 2:
				if i < len(next) {
					next[i] = "changed\n"
				}
			}
		}
		nw := strings.Join(next, "")
		if iter%7 == 0 {
			nw = strings.TrimSuffix(nw, "\n")
		}
		splices, ok := Diff(bundle.TextOf(old), bundle.TextOf(nw))
		if !ok {
			t.Fatalf("iteration %d: no diff", iter)
		}
		e := FileEdit{Kind: bundle.KindMap, Name: "m", Splices: splices}
		got, err := e.Apply(bundletest.Cut(r, old))
		if err != nil || got.String() != nw {
			t.Fatalf("iteration %d: %v\nold %q\nnew %q\ngot %q\nsplices %+v", iter, err, old, nw, got, splices)
		}
	}
}

// TestDiffSmall: one line added among 3,000 is one splice holding that line.
func TestDiffSmall(t *testing.T) {
	var sb strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&sb, "%d-route.example.com r%d\n", i, i)
	}
	old := sb.String()
	at := strings.Index(old, "1500-route")
	nw := old[:at] + "new.example.com x\n" + old[at:]
	e, ok := EditOf(bundle.File{Content: bundle.TextOf(old)}, bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(nw)})
	if !ok || len(e.Splices) != 1 || e.Splices[0].Insert != "new.example.com x\n" || e.Splices[0].Delete != 0 || e.Splices[0].Offset != at {
		t.Fatalf("edit %+v ok=%v", e, ok)
	}
	if e.Hash != bundle.HashContent(nw) || e.BaseHash != bundle.HashContent(old) {
		t.Fatal("hashes")
	}
	// A rewrite of most of the file is not an edit.
	if _, ok := EditOf(bundle.File{Content: bundle.TextOf(old)}, bundle.File{Content: bundle.TextOf(strings.ToUpper(old))}); ok {
		t.Fatal("a rewrite became an edit")
	}
}

// TestApplyRefuses: splices out of order, overlapping or past the end are errors;
// touched spans are whole lines.
func TestApplyRefuses(t *testing.T) {
	base := "a 1\nb 2\nc 3\n"
	for _, s := range [][]Splice{
		{{Offset: 4, Delete: 1}, {Offset: 2}},
		{{Offset: 0, Delete: 5}, {Offset: 4}},
		{{Offset: 10, Delete: 5}},
		{{Offset: -1}},
		{{Offset: 1, Delete: -1}},
	} {
		if _, err := (FileEdit{Splices: s}).Apply(bundle.TextOf(base)); err == nil {
			t.Errorf("%+v applied", s)
		}
		if _, err := (FileEdit{Splices: s}).Touched(bundle.TextOf(base)); err == nil {
			t.Errorf("%+v touched", s)
		}
	}
	e := FileEdit{Splices: []Splice{{Offset: 5, Delete: 1, Insert: "X\x01"}}}
	out, err := e.Apply(bundle.TextOf(base))
	touched, _ := e.Touched(bundle.TextOf(base))
	if err != nil || out.String() != "a 1\nbX\x012\nc 3\n" || len(touched) != 1 || touched[0] != "bX\x012" {
		t.Fatalf("%q %q %v", out, touched, err)
	}
}

// TestTouchedIsTheResultsLines: Touched, which never builds the result, returns
// for random splices (adjacent ones, inserts with and without newlines, a base
// without a final newline) each insert of the result extended to whole lines.
func TestTouchedIsTheResultsLines(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"", "a", "b c", "\n", "d\n", "\ne", "f\ng\n"}
	for iter := range 3000 {
		var sb strings.Builder
		for range r.IntN(8) {
			sb.WriteString(words[r.IntN(len(words))])
		}
		base := sb.String()
		var splices []Splice
		for at := 0; at <= len(base) && len(splices) < 4; {
			off := at + r.IntN(len(base)-at+1)
			del := r.IntN(len(base) - off + 1)
			splices = append(splices, Splice{Offset: off, Delete: del, Insert: words[r.IntN(len(words))]})
			at = off + del
			if r.IntN(3) == 0 {
				break
			}
		}
		e := FileEdit{Splices: splices}
		text := bundletest.Cut(r, base)
		applied, err := e.Apply(text)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		out := applied.String()
		got, err := e.Touched(text)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		var want []string
		end := 0 // where in out the splice's insert ends
		at := 0
		for _, s := range splices {
			start := end + (s.Offset - at)
			end = start + len(s.Insert)
			from := strings.LastIndexByte(out[:start], '\n') + 1
			to := len(out)
			if i := strings.IndexByte(out[end:], '\n'); i >= 0 {
				to = end + i
			}
			want = append(want, out[from:to])
			at = s.Offset + s.Delete
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: base %q splices %+v: touched %q, want %q", iter, base, splices, got, want)
		}
	}
}
