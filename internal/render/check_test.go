package render

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Every line of the new output that the old one does not hold lies in the range
// changedLines returns, which is made of whole lines.
func TestChangedLinesCoverEveryNewLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "backend x", "server s 10.0.0.1:80", "", "ab", "b a"}
	randomLines := func() []string {
		out := make([]string, rng.IntN(12))
		for i := range out {
			out[i] = words[rng.IntN(len(words))]
		}
		return out
	}
	for range 20000 {
		prevLines := randomLines()
		outLines := append([]string(nil), prevLines...)
		for range 1 + rng.IntN(3) { // edit, insert or delete a line
			i := rng.IntN(len(outLines) + 1)
			switch rng.IntN(3) {
			case 0:
				if i < len(outLines) {
					outLines[i] = words[rng.IntN(len(words))] + "!"
				}
			case 1:
				outLines = append(outLines[:i], append([]string{"new " + words[rng.IntN(len(words))]}, outLines[i:]...)...)
			case 2:
				if i < len(outLines) {
					outLines = append(outLines[:i], outLines[i+1:]...)
				}
			}
		}
		prev, out := strings.Join(prevLines, "\n")+"\n", strings.Join(outLines, "\n")+"\n"
		prevLines = strings.Split(strings.TrimSuffix(prev, "\n"), "\n")
		outLines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		from, to := changedLines(out, prev)
		if from > to {
			from = to
		}
		if (from > 0 && out[from-1] != '\n') || (to < len(out) && out[to] != '\n') {
			t.Fatalf("range [%d,%d) of %q is not whole lines", from, to, out)
		}
		// Lines outside the range, counted, must be lines of prev at the same distance
		// from the start or the end.
		head := strings.Count(out[:from], "\n")
		tail := strings.Count(out[to:], "\n")
		if to < len(out) {
			tail-- // the newline that ends the range's last line
		}
		for i := 0; i < head; i++ {
			if outLines[i] != prevLines[i] {
				t.Fatalf("line %d %q before the range is not prev's %q (prev %q, out %q)", i, outLines[i], prevLines[i], prev, out)
			}
		}
		for i := 1; i <= tail; i++ {
			if outLines[len(outLines)-i] != prevLines[len(prevLines)-i] {
				t.Fatalf("line %d from the end %q after the range is not prev's (prev %q, out %q)", i, outLines[len(outLines)-i], prev, out)
			}
		}
	}
}

func TestChangedOutputIsChecked(t *testing.T) {
	prev := "global\n    maxconn 10\n"
	if err := checkChanged("config", "global\n    maxconn 10\n    x \"open\n", prev, true); err == nil {
		t.Fatal("a new line with an open quote passed")
	}
	if err := checkChanged("config", prev, prev, true); err != nil {
		t.Fatal(err)
	}
}
