package render

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// normalizeConfigSlowly is the normal form of haproxy.cfg as normalize describes
// it, line by line over the whole text: what the marks and edits must reproduce.
func normalizeConfigSlowly(s string) string {
	var b strings.Builder
	for rest := strings.ReplaceAll(s, "\r\n", "\n"); rest != ""; {
		var l string
		l, rest = nextLine(rest)
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		word, _, _ := strings.Cut(t, " ")
		switch {
		case config.IsSectionKeyword(word):
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
		case strings.HasPrefix(t, "#") && b.Len() == 0:
		default:
			b.WriteString("    ")
		}
		b.WriteString(t + "\n")
	}
	return b.String()
}

// randomConfigLine is a line a template may write: sections, directives and
// comments, indented or not, blank, with \r\n ends.
func randomConfigLine(rng *rand.Rand, i int) string {
	lines := []string{"backend be_%d", "frontend fe_%d", "  server s%d 10.0.0.1:80 check", "\tserver s%d 10.0.0.2:80  ",
		"    # route %d: a note", "# %d at the start", "", "   ", "    http-request set-var(txn.x) str(%d)", "defaults d%d\r",
		"listen l%d", "  option httplog %d\r", "backend\tnot_a_section_%d"}
	l := lines[rng.IntN(len(lines))]
	if strings.Contains(l, "%d") {
		l = fmt.Sprintf(l, i)
	}
	return l + "\n"
}

// TestNormalizeConfigEditedIsNormalize: a haproxy.cfg rendered again after the
// last normalizes, from the last's normal form and marks, as it would alone —
// over chains of edits (lines added, removed and replaced anywhere, the first
// lines included), so marks carried from edit to edit stay true: at each mark,
// the normal form of the text before it has the length the mark says.
func TestNormalizeConfigEditedIsNormalize(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for chain := range 60 {
		var lines []string
		n := 50 + rng.IntN(3000)
		for i := range n {
			lines = append(lines, randomConfigLine(rng, i))
		}
		raw := strings.Join(lines, "")
		written := writtenAs(rng, lines, nil)
		flat, marks := normalizeConfig(raw)
		if want := normalizeConfigSlowly(raw); flat != want {
			t.Fatalf("chain %d: normalizeConfig differs from the line-by-line normal form", chain)
		}
		out := bundle.TextOf(flat)
		for step := range 30 {
			at := rng.IntN(len(lines) + 1)
			if chain%10 == 0 {
				at = rng.IntN(min(3, len(lines)+1)) // at the start: before the first mark
			}
			cut := min(len(lines), at+rng.IntN(3))
			var add []string
			for range rng.IntN(3) {
				add = append(add, randomConfigLine(rng, 100000+step))
			}
			lines = append(lines[:at:at], append(add, lines[cut:]...)...)
			next := strings.Join(lines, "")
			nextWritten := writtenAs(rng, lines, written)
			got, gotMarks, same := normalizeConfigEdited(nextWritten, written, out, marks)
			if same != (next == raw) {
				t.Fatalf("chain %d step %d: same = %v for texts that are equal: %v", chain, step, same, next == raw)
			}
			if want := normalizeConfigSlowly(next); got.String() != want {
				t.Fatalf("chain %d step %d: edit at line %d (%d lines out, %d in): normal form differs", chain, step, at, cut-at, len(add))
			}
			checkMarks(t, next, got.String(), gotMarks)
			raw, written, out, marks = next, nextWritten, got, gotMarks
		}
	}
}

// writtenAs is lines as a template writes them: runs of lines written directly,
// and runs held (a reused unit's output), the same strings last held where last
// holds a run that is in lines again (held runs compare at their pointers). A
// run ends after a line whose text says so, so that lines an edit did not touch
// make the same runs again.
func writtenAs(rng *rand.Rand, lines []string, last *output) *output {
	held := map[string]string{}
	if last != nil {
		for _, p := range last.parts {
			if p.held != "" {
				held[p.held] = p.held
			}
		}
	}
	o := newOutput(0)
	for i := 0; i < len(lines); {
		n := 1
		for i+n < len(lines) && len(lines[i+n-1])%5 != 0 {
			n++
		}
		run := strings.Join(lines[i:i+n], "")
		if s, ok := held[run]; ok {
			o.writeHeld(s)
		} else if rng.IntN(2) == 0 {
			o.writeHeld(strings.Clone(run))
		} else {
			o.WriteString(run)
		}
		i += n
	}
	return o
}

// checkMarks fails t unless every mark is a line start of raw, in order, past the
// first written line, where raw's normal form (out) so far is as long as it says.
func checkMarks(t *testing.T, raw, out string, marks []configMark) {
	t.Helper()
	var n configNormalizer
	lenAt := map[int]int{} // line start → length of the normal form before it, once a line was written
	for off := 0; off <= len(raw); {
		if n.started {
			lenAt[off] = n.b.Len()
		}
		end := strings.IndexByte(raw[off:], '\n')
		if end < 0 {
			break
		}
		n.write(raw[off:off+end+1], off)
		off += end + 1
	}
	last := -1
	for _, m := range marks {
		want, ok := lenAt[m.raw]
		if !ok || want != m.out || m.raw <= last || m.out > len(out) {
			t.Fatalf("mark %+v: a line start past the first written line %v, normal length there %d (marks %v)", m, ok, want, marks)
		}
		last = m.raw
	}
}
