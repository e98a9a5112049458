package plan

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// TestTranslateDerivedIsFull: over random edits of maps (lines added, removed and
// changed anywhere, with and without a final newline, blank and comment lines,
// aliases changing now and then, most often by one added), the translation derived from a remembered one
// equals translateMap of the whole text, and its hash is the translation's (texts
// whole or in pieces, bundle.Text).
func TestTranslateDerivedIsFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	backends := []string{"be_a", "be_b", "be_c", "be_cc"}
	aliasSets := []map[string]string{ // (each but the third and fifth adds to the one before: backends into pool slots)
		{"be_c": "haptic_pool_000"},
		{"be_c": "haptic_pool_000", "be_a": "haptic_pool_001"},
		{"be_c": "haptic_pool_000", "be_a": "haptic_pool_001", "be_new": "haptic_pool_004"},
		{"be_b": "haptic_pool_002"},
		{"be_b": "haptic_pool_002", "be_cc": "haptic_pool_005"},
		{"be_zz": "haptic_pool_003"}, // names no backend of the maps: each is its own translation
	}
	line := func() string {
		be := backends[rng.IntN(len(backends))]
		switch rng.IntN(6) {
		case 0:
			return be + "/x-hdr v" + fmt.Sprint(rng.IntN(9))
		case 1:
			return "# " + be
		case 2:
			return ""
		default:
			return fmt.Sprintf("h%d.test %s", rng.IntN(50), be)
		}
	}
	cache := &mapTranslations{byName: map[string][]*translation{}}
	var lines []string
	for range 40 {
		lines = append(lines, line())
	}
	derived, same := 0, 0
	for step := range 4000 {
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(lines) + 1)
			switch rng.IntN(3) {
			case 0:
				lines = append(lines[:i], append([]string{line()}, lines[i:]...)...)
			case 1:
				if i < len(lines) {
					lines = append(lines[:i], lines[i+1:]...)
				}
			default:
				if i < len(lines) {
					lines[i] = line()
				}
			}
		}
		text := strings.Join(lines, "\n")
		if rng.IntN(3) > 0 {
			text += "\n"
		}
		aliases := aliasSets[(step/40)%len(aliasSets)]
		name := fmt.Sprintf("m%d.map", rng.IntN(2))
		if kept := cache.byName[name]; len(kept) > 0 && kept[len(kept)-1].in.String() != text {
			derived++
		}
		translated, hash := cache.translate(name, textIn(rng, text), aliases)
		got := translated.String()
		if kept := cache.byName[name]; kept[len(kept)-1].same {
			if got != text {
				t.Fatalf("step %d: a translation marked the same as its input differs", step)
			}
			same++
		}
		if want := translateMap(text, aliases); got != want {
			t.Fatalf("step %d: derived translation\n%q\nwant\n%q", step, got, want)
		}
		if hash != bundle.HashContent(got) {
			t.Fatalf("step %d: hash %s of the translation, want %s", step, hash, bundle.HashContent(got))
		}
	}
	if derived < 3000 || same < 500 {
		t.Fatalf("only %d translations were derived, %d the same as their input", derived, same)
	}
}
