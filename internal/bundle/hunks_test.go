package bundle

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHunksRebuild: applying the hunks to a gives b, the hunks are in order and
// apart, and what they change is the edit distance, refused above the bound.
func TestHunksRebuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for c := range 3000 {
		a := make([]int, rng.IntN(40))
		for i := range a {
			a[i] = rng.IntN(8)
		}
		b := slices.Clone(a)
		for range rng.IntN(6) {
			switch at := rng.IntN(len(b) + 1); rng.IntN(3) {
			case 0:
				b = slices.Insert(b, at, rng.IntN(8))
			case 1:
				if at < len(b) {
					b = slices.Delete(b, at, at+1)
				}
			default:
				if at < len(b) {
					b[at] = rng.IntN(8)
				}
			}
		}
		hs, ok := Hunks(a, b, 100)
		if !ok {
			t.Fatalf("case %d: refused", c)
		}
		var got []int
		at, changed := 0, 0
		for _, h := range hs {
			if h.A0 < at || h.A1 < h.A0 || h.B1 < h.B0 || (h.A0 == h.A1 && h.B0 == h.B1) {
				t.Fatalf("case %d: hunks %v out of order or empty", c, hs)
			}
			got = append(append(got, a[at:h.A0]...), b[h.B0:h.B1]...)
			at, changed = h.A1, changed+h.A1-h.A0+h.B1-h.B0
		}
		got = append(got, a[at:]...)
		if !slices.Equal(got, b) {
			t.Fatalf("case %d: %v with %v is %v, want %v", c, a, hs, got, b)
		}
		if changed > 0 {
			if _, ok := Hunks(a, b, changed-1); ok {
				t.Fatalf("case %d: %v → %v accepted below its distance %d", c, a, b, changed)
			}
		}
	}
}
