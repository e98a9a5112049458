package render

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// TestOutputIsWhatWasWritten: for random writes (white space, short text, large
// map texts, as strings and as bytes, with String read in between), output holds
// exactly what was written, and a map's take normalizes as that does; a large map
// text amid white space is taken without a copy.
func TestOutputIsWhatWasWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	large := func() string {
		var b strings.Builder
		for b.Len() < heldPiece {
			b.WriteString("key" + strings.Repeat("x", rng.IntN(20)) + " value\n")
		}
		return b.String()
	}
	pieces := []func() string{
		func() string { return "" },
		func() string { return "\n" },
		func() string { return "  \n\t" },
		func() string { return "a b\n" },
		func() string { return " c d " },
		large,
	}
	held := 0
	for iter := range 3000 {
		o := newOutput(rng.IntN(3) * heldPiece)
		var want strings.Builder
		var big string
		for range rng.IntN(6) {
			s := pieces[rng.IntN(len(pieces))]()
			if len(s) >= heldPiece {
				big = s
			}
			want.WriteString(s)
			if rng.IntN(2) == 0 {
				o.WriteString(s)
			} else {
				o.Write([]byte(s))
			}
			if o.Len() != want.Len() {
				t.Fatalf("iteration %d: Len %d, wrote %d", iter, o.Len(), want.Len())
			}
			if rng.IntN(10) == 0 && o.String() != want.String() {
				t.Fatalf("iteration %d: String is not what was written", iter)
			}
		}
		for _, kind := range []bundle.Kind{bundle.KindMap, bundle.KindConfig} {
			got := o.take(kind).String()
			if normalize(kind, got) != normalize(kind, want.String()) {
				t.Fatalf("iteration %d: %s: take normalizes to %d bytes, the writes (%q) to %d", iter, kind, len(normalize(kind, got)), want.String()[:min(want.Len(), 200)], len(normalize(kind, want.String())))
			}
			if kind == bundle.KindMap && big != "" && got == big && strings.TrimSpace(strings.Replace(want.String(), big, "", 1)) == "" {
				held++
			}
		}
		if o.String() != want.String() {
			t.Fatalf("iteration %d: String is not what was written", iter)
		}
	}
	if held == 0 {
		t.Fatal("a large map text amid white space was never taken alone")
	}
}

// TestOutputHeldParts: written and held (a reused unit's output) in any order, an
// output is what was written, from any offset on; two outputs written alike from the
// same held strings are the same part by part, and one that differs by a byte is not.
func TestOutputHeldParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	units := make([]string, 8)
	for i := range units {
		units[i] = strings.Repeat(string(rune('a'+i)), heldUnit+rng.IntN(3*heldUnit)) + "\n"
	}
	type op struct {
		held bool
		s    string
	}
	write := func(ops []op) (*output, string) {
		o := newOutput(0)
		var want strings.Builder
		for _, w := range ops {
			if w.held {
				o.writeHeld(w.s)
			} else {
				o.WriteString(w.s)
			}
			want.WriteString(w.s)
		}
		return o, want.String()
	}
	same := 0
	for iter := range 2000 {
		var ops []op
		for range rng.IntN(12) {
			switch rng.IntN(3) {
			case 0:
				ops = append(ops, op{true, units[rng.IntN(len(units))]})
			case 1:
				ops = append(ops, op{true, "short\n"}) // below heldUnit: copied
			default:
				ops = append(ops, op{false, []string{"", "\n", "backend x\n", "  y z "}[rng.IntN(4)]})
			}
		}
		o, want := write(ops)
		if o.Len() != len(want) || o.String() != want {
			t.Fatalf("iteration %d: output is not what was written", iter)
		}
		if at := rng.IntN(len(want) + 1); o.from(at) != want[at:] {
			t.Fatalf("iteration %d: from(%d) is not what was written from there", iter, at)
		}
		again, _ := write(ops)
		if again.sameAs(o) {
			same++
		} else if o.held > 0 {
			t.Fatalf("iteration %d: written alike, not the same", iter)
		}
		if len(ops) > 0 && o.held > 0 {
			changed := slices.Clone(ops)
			i := rng.IntN(len(changed))
			if s := changed[i].s; s != "" { // one byte other, the length the same
				c := byte('#')
				if s[0] == c {
					c = '$'
				}
				changed[i].s = string(c) + s[1:]
				if other, _ := write(changed); other.sameAs(o) {
					t.Fatalf("iteration %d: a byte other, still the same", iter)
				}
			}
		}
	}
	if same == 0 {
		t.Fatal("no two outputs were the same")
	}
}

// A map text map_text writes amid white space is the file's output itself, its
// pieces not copied; written twice, or with other text, the output is what was
// written.
func TestTakeGivesTheTextHeld(t *testing.T) {
	var b strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&b, "host-%d.example.com be_%d\n", i, i)
	}
	text := bundle.TextOf(b.String()).Edited(0, 0, "a.example.com be_a\n")
	if len(text.Parts()) < 2 {
		t.Fatalf("the text is in %d pieces, want several", len(text.Parts()))
	}
	o := newOutput(0)
	o.WriteString("\n  ")
	o.holdText(text)
	o.WriteString("\n")
	if got := o.take(bundle.KindMap); !got.Same(text) {
		t.Fatal("take copied the text map_text held")
	}
	if got := o.take(bundle.KindConfig); got.Same(text) || got.String() != "\n  "+text.String()+"\n" {
		t.Fatal("take of a haproxy.cfg is not what was written")
	}
	o.holdText(text)
	if got := o.take(bundle.KindMap); got.String() != "\n  "+text.String()+"\n"+text.String() {
		t.Fatal("take of a text held twice is not what was written")
	}
}
