package render

import (
	"sort"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// Sorted map lines and their text, kept between renders by gateway_merge_runs and
// ingress_merge_runs and edited by the lines of the runs that came and went.

// runChanges are the runs of prev that are not in now (gone) and those of now that
// were not in prev (came), by id: runs are remembered values, the same from one
// render to the next while their routes do not change.
func runChanges[R any, K comparable](prev, now []R, id func(R) K) (gone, came []R) {
	in := make(map[K]bool, len(now))
	for _, r := range now {
		in[id(r)] = true
	}
	had := make(map[K]bool, len(prev))
	for _, r := range prev {
		had[id(r)] = true
		if !in[id(r)] {
			gone = append(gone, r)
		}
	}
	for _, r := range now {
		if !had[id(r)] {
			came = append(came, r)
		}
	}
	return gone, came
}

// editSorted returns sorted list without one occurrence of each line of out and
// with the lines of in, as a new slice made in one pass (the old one may be part of
// a remembered index); list itself when there is nothing to edit. found is false
// when a line of out is not in list.
func editSorted(list, out, in []string) (edited []string, found bool) {
	if len(out) == 0 && len(in) == 0 {
		return list, true
	}
	found = true
	sort.Strings(out)
	sort.Strings(in)
	cut := make([]int, 0, len(out)+1) // positions taken out, ascending
	at := 0
	for _, l := range out {
		i := at + sort.SearchStrings(list[at:], l)
		if i < len(list) && list[i] == l {
			cut = append(cut, i)
			i++
		} else {
			found = false
		}
		at = i
	}
	cut = append(cut, len(list))
	edited = make([]string, 0, len(list)-len(cut)+1+len(in))
	from := 0
	for _, c := range cut {
		seg := list[from:c]
		for len(in) > 0 {
			k := sort.SearchStrings(seg, in[0])
			if k == len(seg) && c < len(list) {
				break // sorts after this piece: placed with a later one
			}
			edited = append(append(edited, seg[:k]...), in[0])
			seg, in = seg[k:], in[1:]
		}
		edited = append(edited, seg...)
		from = c + 1
	}
	return edited, found
}

// mergeSorted merges sorted b into sorted a: a new slice, or a when b is empty.
func mergeSorted(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := make([]string, 0, len(a)+len(b))
	at := 0
	for _, l := range b {
		i := at + sort.SearchStrings(a[at:], l)
		out = append(append(out, a[at:i]...), l)
		at = i
	}
	return append(out, a[at:]...)
}

// spliceText returns the text of lines (each line from start(line) on, and a
// newline; a line where start is negative has none) from oldText, the text of old:
// the lines both share at the start and at the end are copied from oldText as two
// pieces; only the lines between are written.
func spliceText(old, lines []string, oldText string, start func(string) int) string {
	p := 0
	for p < len(old) && p < len(lines) && old[p] == lines[p] {
		p++
	}
	s := 0
	for s < len(old)-p && s < len(lines)-p && old[len(old)-1-s] == lines[len(lines)-1-s] {
		s++
	}
	if p == len(old) && p == len(lines) {
		return oldText
	}
	head, tail := textLen(old[:p], start), textLen(old[len(old)-s:], start)
	mid := lines[p : len(lines)-s]
	var b strings.Builder
	b.Grow(head + textLen(mid, start) + tail)
	b.WriteString(oldText[:head])
	writeLines(&b, mid, start)
	b.WriteString(oldText[len(oldText)-tail:])
	text := b.String()
	if oldText != "" {
		bundle.Edited(bundle.TextOf(oldText), bundle.TextOf(text), head, tail) // for the check, plan and hash of the map
	}
	return text
}

// textLen is the length of the text of lines (see spliceText).
func textLen(lines []string, start func(string) int) int {
	n := 0
	for _, l := range lines {
		if i := start(l); i >= 0 {
			n += len(l) - i + 1
		}
	}
	return n
}

// linesText is the text of lines (see spliceText) made from nothing.
func linesText(lines []string, start func(string) int) string {
	return spliceText(nil, lines, "", start)
}

// textFrom: every line's text starts at n.
func textFrom(n int) func(string) int { return func(string) int { return n } }

// textAfter: a line's text follows its first sep; a line without sep has none.
func textAfter(sep string) func(string) int {
	return func(l string) int {
		if i := strings.Index(l, sep); i >= 0 {
			return i + len(sep)
		}
		return -1
	}
}
