package render

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// TestMapFastPathIsNormalize: a map that normalize returns as it is passes the
// check, and one the check passes is what the line-by-line normalization makes.
func TestMapFastPathIsNormalize(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a b", "k v", " ", "\t", "\n", "\r\n", "\r", "\u00a0", "x", "é", "\v", ""}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		var slow strings.Builder
		for rest := strings.ReplaceAll(s, "\r\n", "\n"); rest != ""; {
			var l string
			l, rest = nextLine(rest)
			if t := strings.TrimSpace(l); t != "" {
				slow.WriteString(t + "\n")
			}
		}
		if got := normalize(bundle.KindMap, s); got != slow.String() {
			t.Fatalf("%q: normalize gives %q, line by line %q", s, got, slow.String())
		}
		if linesNormal(s) && s != slow.String() {
			t.Fatalf("%q passes the check but normalizes to %q", s, slow.String())
		}
	}
}

// TestNormalizeEditedIsNormalize: a map rendered again after a normal one
// normalizes as it would alone, whatever the edit brings (blank lines, blanks at a
// line's end, no final newline), small or large enough for remembered compares.
func TestNormalizeEditedIsNormalize(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	pieces := []string{"a b", "k v", " ", "\t", "\n", "\r\n", "x", "\u00a0", ""}
	for i := range 3000 {
		var lines []string
		n := rng.IntN(40)
		if i%10 == 0 {
			n = 3000 // over the size from which compares are remembered
		}
		for j := range n {
			lines = append(lines, "host"+strings.Repeat("x", j%13)+" be"+string(rune('a'+j%26)))
		}
		last := normalize(bundle.KindMap, strings.Join(lines, "\n")+"\n")
		if !linesNormal(last) {
			t.Fatalf("%q is not its own normal form", last)
		}
		at := rng.IntN(len(lines) + 1)
		cut := min(len(lines), at+rng.IntN(3))
		var mid strings.Builder
		for range rng.IntN(4) {
			mid.WriteString(pieces[rng.IntN(len(pieces))])
			if rng.IntN(2) == 0 {
				mid.WriteString("\n")
			}
		}
		s := strings.Join(lines[:at], "\n")
		if at > 0 {
			s += "\n"
		}
		s += mid.String() + strings.Join(lines[cut:], "\n")
		if cut < len(lines) && rng.IntN(5) > 0 {
			s += "\n"
		}
		if got, want := normalizeEdited(bundle.KindMap, bundle.TextOf(s), bundle.TextOf(last)).String(), normalize(bundle.KindMap, s); got != want {
			t.Fatalf("edit %q at line %d: normalizeEdited gives %q, normalize %q", mid.String(), at, got, want)
		}
	}
}
