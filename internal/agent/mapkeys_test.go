package agent

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/bundle/bundletest"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// TestMapKeysFollowEdits: over random edits of a map (lines added, removed and
// changed, duplicate keys, comments, blank lines, CR, no final newline, splices
// that are not whole lines), the index an edit derives answers every key as a
// scan of the edited content does, and an index that does not apply is not used.
func TestMapKeysFollowEdits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	line := func() string {
		k := fmt.Sprintf("k%d.test", rng.IntN(30))
		switch rng.IntN(8) {
		case 0:
			return "# " + k + " v"
		case 1:
			return ""
		case 2:
			return "  " + k + "\tv" + fmt.Sprint(rng.IntN(3)) + "\r"
		default:
			return k + " v" + fmt.Sprint(rng.IntN(3))
		}
	}
	var lines []string
	for range 40 {
		lines = append(lines, line())
	}
	text := func() string {
		s := strings.Join(lines, "\n")
		if rng.IntN(4) > 0 {
			s += "\n"
		}
		return s
	}
	var m mapKeys
	cur := text()
	derived, unaligned := 0, 0
	for step := range 3000 {
		for range 1 + rng.IntN(3) {
			lines = bundletest.EditLine(rng, lines, line)
		}
		next := text()
		e, ok := agentapi.EditOf(bundle.File{Kind: bundle.KindMap, Name: "m", Content: bundle.TextOf(cur)}, bundle.File{Kind: bundle.KindMap, Name: "m", Content: bundle.TextOf(next)})
		if !ok {
			cur = next
			continue
		}
		if rng.IntN(10) == 0 && len(cur) > 2 { // a splice inside a line
			at := 1 + rng.IntN(len(cur)-1)
			e.Splices = []agentapi.Splice{{Offset: at, Insert: "x"}}
			next = cur[:at] + "x" + cur[at:]
			unaligned++
		}
		m.edited("m", bundle.TextOf(cur), bundle.TextOf(next), e)
		keys := map[string]bool{}
		for i := range 30 {
			keys[fmt.Sprintf("k%d.test", i)] = true
		}
		want := map[string][]string{}
		for _, en := range runtime.MapFileEntriesFor(next, keys) {
			want[en.Key] = append(want[en.Key], en.Value)
		}
		ix := m.entries("m", bundle.TextOf(next))
		if ix == nil {
			if wholeLines(bundle.TextOf(cur), e) {
				t.Fatalf("step %d: no index after a whole-line edit", step)
			}
			cur = next
			continue
		}
		derived++
		for k := range keys {
			got := slices.Sorted(slices.Values(ix.values[k]))
			w := slices.Sorted(slices.Values(want[k]))
			if !slices.Equal(got, w) {
				t.Fatalf("step %d: key %s: index %q, scan %q", step, k, got, w)
			}
		}
		if m.entries("m", bundle.TextOf(cur)) != nil && cur != next {
			t.Fatalf("step %d: the index answers for the content before the edit", step)
		}
		cur = next
	}
	if derived < 2000 || unaligned < 100 {
		t.Fatalf("derived %d indexes, %d unaligned splices", derived, unaligned)
	}
}
