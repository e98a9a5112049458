package render

import (
	"math/rand/v2"
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
			got := o.take(kind)
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
