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
