package bundle

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCommonLinesCases(t *testing.T) {
	long := strings.Repeat("x", 700)
	for _, c := range []struct {
		a, b           string
		prefix, suffix int
	}{
		{"a\nc\n", "a\nb\nc\n", 2, 2},
		{"x\n", "x\nz\n", 2, 0},
		{"x\ny", "x\nyz\n", 2, 0},
		{"ab\n", "ac\n", 0, 0},
		{"k v\nx 1\nz v\n", "k v\nx 2\nz v\n", 4, 4},
		{"a b\n", "a bb\n", 0, 0},
		{"same\n", "same\n", 5, 0},
		{"", "a\n", 0, 0},
		{"q\nw\n", "w\n", 0, 2},
		{long + "1\n" + long + "\n", long + "2\n" + long + "\n", 0, 701},
	} {
		p, s := CommonLines(TextOf(c.a), TextOf(c.b))
		if p != c.prefix || s != c.suffix {
			t.Errorf("%q %q: got %d,%d want %d,%d", c.a, c.b, p, s, c.prefix, c.suffix)
		}
	}
}

// The common prefix and suffix are whole lines of both texts, equal, and apart;
// every line that differs lies between them.
func TestCommonLinesAreWholeEqualLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "backend x", "server s 10.0.0.1:80", "", "ab", "b a", strings.Repeat("w", 300)}
	randomLines := func() []string {
		out := make([]string, rng.IntN(12))
		for i := range out {
			out[i] = words[rng.IntN(len(words))]
		}
		return out
	}
	for range 20000 {
		lines := randomLines()
		edited := append([]string(nil), lines...)
		for range 1 + rng.IntN(3) { // edit, insert or delete a line
			i := rng.IntN(len(edited) + 1)
			switch rng.IntN(3) {
			case 0:
				if i < len(edited) {
					edited[i] = words[rng.IntN(len(words))] + "!"
				}
			case 1:
				edited = append(edited[:i], append([]string{"new " + words[rng.IntN(len(words))]}, edited[i:]...)...)
			case 2:
				if i < len(edited) {
					edited = append(edited[:i], edited[i+1:]...)
				}
			}
		}
		a, b := strings.Join(lines, "\n")+"\n", strings.Join(edited, "\n")
		if rng.IntN(2) == 0 {
			b += "\n"
		}
		if rng.IntN(10) == 0 { // large enough to be remembered: asked both ways, twice
			big := strings.Repeat("pad line\n", commonCacheMin/9+1)
			a, b = big+a+big, big+b+big
		}
		p, s := CommonLines(TextOf(a), TextOf(b))
		if p2, s2 := CommonLines(TextOf(b), TextOf(a)); p2 != p || s2 != s {
			t.Fatalf("%q %q: %d,%d one way, %d,%d the other", a, b, p, s, p2, s2)
		}
		if p2, s2 := commonLinesFrom(TextOf(a), TextOf(b), 0, 0); p2 != p || s2 != s {
			t.Fatalf("%q %q: %d,%d remembered, %d,%d computed", a, b, p, s, p2, s2)
		}
		if p > len(a) || p > len(b) || p+s > min(len(a), len(b)) && a != b {
			t.Fatalf("%q %q: prefix %d and suffix %d overlap", a, b, p, s)
		}
		if a[:p] != b[:p] || a[len(a)-s:] != b[len(b)-s:] {
			t.Fatalf("%q %q: prefix %d or suffix %d differ", a, b, p, s)
		}
		for _, t2 := range []string{a, b} {
			if (p > 0 && t2[p-1] != '\n') || (s > 0 && len(t2)-s > 0 && t2[len(t2)-s-1] != '\n') {
				t.Fatalf("%q %q: prefix %d or suffix %d is not whole lines of %q", a, b, p, s, t2)
			}
		}
		if a == b {
			continue
		}
		// the lines between are all that differ: a's lines there replaced by b's give b
		if got := a[:p] + b[p:len(b)-s] + a[len(a)-s:]; got != b {
			t.Fatalf("%q %q: splice gives %q", a, b, got)
		}
	}
}

// Told any head and tail the two texts share, the compare Edited remembers answers
// as CommonLines.
func TestEditedIsCommonLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"a", "b", "a b", "", "x\n", "\n", "ab"}
	text := func() string {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString("\n")
		}
		return b.String()
	}
	for range 50000 {
		a, b := text(), text()
		if rng.IntN(3) == 0 {
			b = a[:rng.IntN(len(a)+1)] + text() + a[rng.IntN(len(a)+1):]
		}
		n := min(len(a), len(b))
		sharedHead := commonPrefix(a, b, n)
		sharedTail := commonSuffix(a, b, n)
		head, tail := rng.IntN(sharedHead+1), rng.IntN(sharedTail+1)
		wantP, wantS := commonLinesFrom(TextOf(a), TextOf(b), 0, 0)
		if p, s := commonLinesFrom(TextOf(a), TextOf(b), head, tail); p != wantP || s != wantS {
			t.Fatalf("%q %q told %d,%d: got %d,%d, CommonLines %d,%d", a, b, head, tail, p, s, wantP, wantS)
		}
	}
}
