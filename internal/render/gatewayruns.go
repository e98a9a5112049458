package render

import (
	"sort"
	"strings"
)

// gatewayMergeRuns is gateway_merge_runs(s, runs...): gateway_merge(s, runs...) for
// the merged runs of every route of a render, without the per-line work that makes
// a merge grow with the routes. The runs are remembered states, so a change brings
// one new run and drops one: the map lines the index sorts are kept sorted between
// renders (per Gateway fleet) and edited by those runs' lines only. When some key is
// in two runs (two routes claim one match: the first wins), or s already holds
// lines, it merges as gateway_merge does. Otherwise it leaves s.Seen, s.Hosts,
// s.Exact, s.PrefixExact, s.PrefixSorted and s.HeaderLines unfilled: gateway_index
// reads those lines from the remembered lists.
func (e *Engine) gatewayMergeRuns(s *GatewayState, runs ...*GatewayState) {
	if len(s.Exact)+len(s.PrefixExact)+len(s.PrefixSorted)+len(s.Regex)+len(s.Hosts)+len(s.HeaderLines) > 0 {
		gatewayMerge(s, runs...)
		return
	}
	if e.st.kept.runs == nil {
		e.st.kept.runs = map[string]*mergedRuns{}
	}
	m := e.st.kept.runs[s.Only]
	if m == nil {
		m = &mergedRuns{}
		e.st.kept.runs[s.Only] = m
	}
	if !m.update(runs) {
		gatewayMerge(s, runs...)
		return
	}
	s.prepareUnkeyed(runs)
	for _, r := range runs { // no key is in two runs: every line is kept
		s.PlainPrefixes = append(s.PlainPrefixes, r.PlainPrefixes...)
		s.Regex = append(s.Regex, r.Regex...)
		s.addUnkeyed(r)
	}
	s.merged = m
	s.weightedText, s.weightedLines = runsWeightedText(runs)
}

// runsWeightedText is the text of the runs' weighted.map lines in run order (what
// addUnkeyed appends to Weighted), made of each run's own text, which a run keeps:
// a copy of the runs' texts in a few pieces, not of every line.
func runsWeightedText(runs []*GatewayState) (text string, lines int) {
	size := 0
	for _, r := range runs {
		if r.weightedText == "" && len(r.Weighted) > 0 {
			r.weightedText, r.weightedLines = linesText(r.Weighted, textFrom(0)), len(r.Weighted)
		}
		size, lines = size+len(r.weightedText), lines+r.weightedLines
	}
	var b strings.Builder
	b.Grow(size)
	for _, r := range runs {
		b.WriteString(r.weightedText)
	}
	return b.String(), lines
}

// mergedRuns is what gateway_merge_runs keeps of the runs it merged last.
type mergedRuns struct {
	runs  map[*GatewayState]bool
	keys  map[string]int // a keyed line's key → how many runs hold it
	dups  int            // keys that more than one run holds
	hosts map[string]int // host → how many runs hold it
	// The index's lists, sorted: host.map lines, the exact, prefix-exact and prefix
	// lines (prefix with its sort key) and the routes' header lines.
	hostLines, exact, prefixExact, prefix, headerLines []string
	// texts are the lists as map text (from listText of each line, a newline after
	// it), spliced from the last ones: a change copies them in three pieces instead
	// of joining thousands of lines scattered over the heap.
	texts [5]string
}

// listText is where each line of a list starts as map text (after a sort key).
var listText = [5]func(string) int{textFrom(0), textFrom(0), textFrom(0), textFrom(7), textFrom(0)}

// sortedEdits are lines to take out of and put into the sorted lists.
type sortedEdits struct{ out, in [5][]string }

const (
	listHosts = iota
	listExact
	listPrefixExact
	listPrefix
	listHeaders
)

func (m *mergedRuns) lists() [5]*[]string {
	return [5]*[]string{&m.hostLines, &m.exact, &m.prefixExact, &m.prefix, &m.headerLines}
}

// update makes m describe runs; it reports whether no key is in two runs.
func (m *mergedRuns) update(runs []*GatewayState) bool {
	now := make(map[*GatewayState]bool, len(runs))
	for _, r := range runs {
		now[r] = true
	}
	var gone, came []*GatewayState
	for r := range m.runs {
		if !now[r] {
			gone = append(gone, r)
		}
	}
	for _, r := range runs {
		if !m.runs[r] {
			came = append(came, r)
		}
	}
	if len(gone)+len(came) > len(runs)/2 || !m.edit(gone, came) { // most of it, or lost track: start over
		*m = mergedRuns{}
		m.edit(nil, runs)
	}
	m.runs = now
	return m.dups == 0
}

// edit takes the runs gone out and puts the runs that came in; false when a line
// to take out is not there.
func (m *mergedRuns) edit(gone, came []*GatewayState) bool {
	if m.keys == nil {
		m.keys, m.hosts = map[string]int{}, map[string]int{}
	}
	var e sortedEdits
	for _, r := range gone {
		m.account(r, -1, &e)
	}
	for _, r := range came {
		m.account(r, 1, &e)
	}
	ok := true
	for i, list := range m.lists() {
		edited, found := editSorted(*list, e.out[i], e.in[i])
		m.texts[i] = spliceText(*list, edited, m.texts[i], listText[i])
		*list, ok = edited, ok && found
	}
	return ok
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
	for _, l := range mid {
		if i := start(l); i >= 0 {
			b.WriteString(l[i:])
			b.WriteByte('\n')
		}
	}
	b.WriteString(oldText[len(oldText)-tail:])
	return b.String()
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

// account adds (d = 1) or takes out (d = -1) what run r brings.
func (m *mergedRuns) account(r *GatewayState, d int, e *sortedEdits) {
	edit := &e.in
	if d < 0 {
		edit = &e.out
	}
	for _, list := range [][]string{r.Exact, r.PrefixExact, r.PrefixSorted, r.Regex} {
		for _, l := range list {
			was := count(m.keys, lineKey(l), d)
			if was >= 2 && was+d < 2 {
				m.dups--
			} else if was < 2 && was+d >= 2 {
				m.dups++
			}
		}
	}
	for h := range r.Hosts {
		if was := count(m.hosts, h, d); (d > 0 && was == 0) || (d < 0 && was == 1) {
			edit[listHosts] = append(edit[listHosts], h+" "+h)
		}
	}
	for _, keyed := range []struct {
		list  int
		lines []string
	}{{listExact, r.Exact}, {listPrefixExact, r.PrefixExact}, {listPrefix, r.PrefixSorted}} {
		for _, l := range keyed.lines {
			edit[keyed.list] = append(edit[keyed.list], lineOf(l))
		}
	}
	edit[listHeaders] = append(edit[listHeaders], r.HeaderLines...)
}

// count adds d to counts[k], dropping a zero count, and returns the count before.
func count(counts map[string]int, k string, d int) (was int) {
	was = counts[k]
	if was+d == 0 {
		delete(counts, k)
	} else {
		counts[k] = was + d
	}
	return was
}

// editSorted returns sorted list without one occurrence of each line of out and
// with the lines of in, as a new slice (the old one may be part of a remembered
// index); list itself when there is nothing to edit. found is false when a line of
// out is not in list.
func editSorted(list, out, in []string) (edited []string, found bool) {
	if len(out) == 0 && len(in) == 0 {
		return list, true
	}
	found = true
	sort.Strings(out)
	kept := make([]string, 0, len(list)-len(out)+len(in))
	at := 0
	for _, l := range out {
		i := at + sort.SearchStrings(list[at:], l)
		kept = append(kept, list[at:i]...)
		if i < len(list) && list[i] == l {
			i++ // taken out
		} else {
			found = false
		}
		at = i
	}
	kept = append(kept, list[at:]...)
	sort.Strings(in)
	return mergeSorted(kept, in), found
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
