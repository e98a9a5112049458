// Package bundletest makes texts in pieces for tests: what a render makes of a large
// file, for the readers of bundle.Text to be tested with beside whole strings; and
// random edits of a file's lines.
package bundletest

import (
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// Cut is s as a text in pieces cut at random places (within lines too).
func Cut(rng *rand.Rand, s string) bundle.Text { return cut(rng, s, false) }

// CutAtLines is s as a text in pieces cut at random line ends, as a rendered map is.
func CutAtLines(rng *rand.Rand, s string) bundle.Text { return cut(rng, s, true) }

func cut(rng *rand.Rand, s string, atLines bool) bundle.Text {
	var parts []string
	for len(s) > 0 {
		n := 1 + rng.IntN(len(s))
		if i := strings.IndexByte(s[n-1:], '\n'); atLines && i >= 0 {
			n += i
		}
		parts, s = append(parts, s[:n]), s[n:]
	}
	return bundle.Pieces(parts)
}

// EditLine is lines with one random edit: a line made by line inserted, a line
// deleted or a line replaced by one line makes, at a random place (none when that
// place has no line to delete or replace).
func EditLine(rng *rand.Rand, lines []string, line func() string) []string {
	i := rng.IntN(len(lines) + 1)
	switch rng.IntN(3) {
	case 0:
		return slices.Insert(lines, i, line())
	case 1:
		if i < len(lines) {
			return slices.Delete(lines, i, i+1)
		}
	default:
		if i < len(lines) {
			lines[i] = line()
		}
	}
	return lines
}
