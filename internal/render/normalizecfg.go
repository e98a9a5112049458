package render

import (
	"slices"
	"sort"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// configMark is a line start of a rendered haproxy.cfg (raw) and where the normal
// form of the text before it ends (out). Past the first written line a line's
// normal form depends on that line alone, so the normal form of the text between
// a mark and any later line start is written on its own.
type configMark struct{ raw, out int }

// configMarkEvery spaces the marks: an edit's normal form is joined to its last
// version's by normalizing at most this much text on either side of it.
const configMarkEvery = 4096

// configNormalizer writes the normal form of haproxy.cfg (see normalize) line by
// line, and marks its lines every configMarkEvery bytes.
type configNormalizer struct {
	b        strings.Builder
	started  bool // a line was written: sections get a blank line before them
	marks    []configMark
	nextMark int // the raw offset from which the next mark is taken
	outAt    int // where b's text starts in the normal form
}

// write normalizes s, whole lines of the raw text starting at raw offset at.
// (TrimSpace takes the \r of a \r\n line end with the other blanks.)
func (n *configNormalizer) write(s string, at int) {
	for off := 0; off < len(s); {
		end, next := len(s), len(s)
		if i := strings.IndexByte(s[off:], '\n'); i >= 0 {
			end, next = off+i, off+i+1
		}
		if n.started && at+off >= n.nextMark {
			n.marks = append(n.marks, configMark{raw: at + off, out: n.outAt + n.b.Len()})
			n.nextMark = at + off + configMarkEvery
		}
		if t := strings.TrimSpace(s[off:end]); t != "" {
			word, _, _ := strings.Cut(t, " ")
			switch {
			case config.IsSectionKeyword(word):
				if n.started {
					n.b.WriteByte('\n')
				}
			case strings.HasPrefix(t, "#") && !n.started:
			default:
				n.b.WriteString("    ")
			}
			n.b.WriteString(t)
			n.b.WriteByte('\n')
			n.started = true
		}
		off = next
	}
}

// normalizeConfig is normalize(bundle.KindConfig, s), with its marks.
func normalizeConfig(s string) (string, []configMark) {
	var n configNormalizer
	n.b.Grow(len(s) + len(s)/4)
	n.write(s, 0)
	return n.b.String(), n.marks
}

// normalizeConfigEdited is normalizeConfig of a haproxy.cfg rendered again (raw,
// as the template wrote it) after last (its output as written, normal form and
// marks), without copying either raw text whole: the lines raw shares with last
// at its start and end have the normal form they had, found from the marks next
// to the edit; only the lines between are normalized. (Every endpoint or route
// change rewrites a server or comment line of a configuration of thousands of
// backends: normalizing all of it was a sixth of such a render, and copying the
// raw text into one string another.) same reports that raw is last's text.
func normalizeConfigEdited(raw, last *output, lastOut bundle.Text, marks []configMark) (out bundle.Text, outMarks []configMark, same bool) {
	segs, lastSegs := raw.segments(), last.segments()
	pre, suf := commonLines(segs, lastSegs, raw.Len(), last.Len())
	if pre == raw.Len() && pre == last.Len() {
		return lastOut, marks, true
	}
	from := last.Len() - suf // where the common end starts in last
	i := sort.Search(len(marks), func(k int) bool { return marks[k].raw > pre }) - 1
	j := sort.Search(len(marks), func(k int) bool { return marks[k].raw > from }) - 1
	if i < 0 { // the edit is in the first lines: there is no mark before it
		normal, outMarks := normalizeConfig(raw.String())
		return bundle.TextOf(normal), outMarks, false
	}
	head := marks[i].out + normalLen(slice(lastSegs, marks[i].raw, pre))
	tail := marks[j].out + normalLen(slice(lastSegs, marks[j].raw, from)) // where lastOut's common end starts
	mid := slice(segs, pre, raw.Len()-suf)
	// The lines between are normalized on their own, their marks at where they go;
	// lastOut's text before and after them is shared, not copied (bundle.Text).
	n := configNormalizer{started: true, marks: slices.Clone(marks[:i+1]), nextMark: marks[i].raw + configMarkEvery, outAt: head}
	n.b.Grow(2 * len(mid))
	n.write(mid, pre)
	shiftRaw, shiftOut := raw.Len()-suf-from, head+n.b.Len()-tail
	for _, m := range marks[j+1:] {
		n.marks = append(n.marks, configMark{raw: m.raw + shiftRaw, out: m.out + shiftOut})
	}
	out = lastOut.Edited(head, tail, n.b.String())
	bundle.Edited(lastOut, out, head, lastOut.Len()-tail)
	return out, n.marks, false
}

// normalLen is the length of the normal form of s, whole lines after the first
// written line of a configuration.
func normalLen(s string) int {
	n := configNormalizer{started: true, nextMark: len(s) + 1}
	n.write(s, 0)
	return n.b.Len()
}
