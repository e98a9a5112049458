package render

import (
	"slices"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// gatewayMergeRuns is gateway_merge_runs(s, runs...): gateway_merge(s, runs...) for
// the merged runs of every route of a render, without the per-line work that makes
// a merge grow with the routes. The runs are remembered states, so a change brings
// one new run and drops one: the map lines the index sorts are kept sorted between
// renders (per Gateway fleet) and edited by those runs' lines only. When some key is
// in two runs (two routes claim one match: the first wins), or s already holds
// lines, it merges as gateway_merge does. Otherwise it leaves s.Seen, s.Hosts,
// s.Exact, s.PrefixExact, s.PrefixSorted and s.HeaderLines unfilled: gateway_index
// reads those lines from the remembered lists. When no backend is in two runs either,
// the runs' backends are appended whole and s.BackendIdx stays unfilled too.
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
	if m.sharedBackends > 0 || len(s.Backends) > 0 || len(s.BackendIdx) > 0 {
		s.prepareUnkeyed(runs)
		for _, r := range runs { // no key is in two runs: every line is kept
			s.Regex = append(s.Regex, r.Regex...)
			s.addUnkeyed(r)
		}
		s.addPlainPrefixes(runs)
	} else {
		s.addDistinct(runs, &m.joinedBackends)
	}
	s.merged = m
	s.weightedText, s.weightedLines = m.weighted.of(runs)
}

// weightedText is the text of the runs' weighted.map lines in run order (what
// addUnkeyed appends to Weighted), made of each run's own text, which a run keeps:
// a copy of the runs' texts in a few pieces, not of every line. The last one made
// is kept with the runs' texts it joined: runs whose texts are those (another
// render of the same routes: admission's, then the fleet's) get it again.
type weightedText struct {
	text  string
	lines int
	parts []string
}

func (w *weightedText) of(runs []*GatewayState) (string, int) {
	size, lines := 0, 0
	for _, r := range runs {
		if r.weightedText == "" && len(r.Weighted) > 0 {
			r.weightedText, r.weightedLines = linesText(r.Weighted, textFrom(0)), len(r.Weighted)
		}
		size, lines = size+len(r.weightedText), lines+r.weightedLines
	}
	// The runs' texts it begins and ends with as before (one run came or went).
	head, tail, i, j := 0, 0, 0, 0
	for ; i < len(runs) && i < len(w.parts) && runs[i].weightedText == w.parts[i]; i++ {
		head += len(w.parts[i])
	}
	if i == len(runs) && i == len(w.parts) && lines == w.lines {
		return w.text, w.lines
	}
	for ; j < len(runs)-i && j < len(w.parts)-i && runs[len(runs)-1-j].weightedText == w.parts[len(w.parts)-1-j]; j++ {
		tail += len(w.parts[len(w.parts)-1-j])
	}
	var b strings.Builder
	b.Grow(size)
	w.parts = w.parts[:0]
	for _, r := range runs {
		b.WriteString(r.weightedText)
		w.parts = append(w.parts, r.weightedText)
	}
	last := w.text
	w.text, w.lines = b.String(), lines
	if last != "" {
		bundle.Edited(bundle.TextOf(last), bundle.TextOf(w.text), head, tail)
	}
	return w.text, w.lines
}

// mergedRuns is what gateway_merge_runs keeps of the runs it merged last.
type mergedRuns struct {
	prev  []*GatewayState // the runs merged last
	keys  map[string]int  // a keyed line's key → how many runs hold it
	dups  int             // keys that more than one run holds
	hosts map[string]int  // host → how many runs hold it
	// backends counts the runs that hold each backend; sharedBackends is how many
	// backends more than one run holds (without any, the runs' backends are appended
	// as they are, and BackendIdx is left unfilled).
	backends       map[string]int
	sharedBackends int
	// joinedBackends are the runs' backends in a row when no backend is in two runs
	joinedBackends joined[*GatewayState, *GatewayBackend]
	// The index's lists, sorted, and their map text (listText of each line, a
	// newline after it): host.map lines, the exact, prefix-exact and prefix lines
	// (prefix with its sort key) and the routes' header lines. Held in chunks: a
	// change copies the chunks it touches and splices the text around them, instead
	// of copying 50,000 lines and joining thousands scattered over the heap.
	lists [5]sortedText
	// weighted is the runs' weighted.map text; headers the header lines' text with
	// the backends' header lines merged in.
	weighted weightedText
	headers  mergedHeaders
}

// mergedHeaders is the text of the routes' header lines merged with the
// backends', kept with what it was made of.
type mergedHeaders struct {
	routes   bundle.Text // the routes' lines' text
	backends []string
	text     bundle.Text
}

// of returns the text of the routes' lines (whose text is routes) merged with the
// backends' (sorted), as lines gives them: the last one when both are what they
// were.
func (h *mergedHeaders) of(routes bundle.Text, backends []string, lines func() []string) bundle.Text {
	if h.text.Len() == 0 || !h.routes.Same(routes) || !slices.Equal(h.backends, backends) {
		h.routes, h.backends, h.text = routes, backends, bundle.TextOf(linesText(lines(), textFrom(0)))
	}
	return h.text
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

// update makes m describe runs; it reports whether no key is in two runs.
func (m *mergedRuns) update(runs []*GatewayState) bool {
	gone, came := runChanges(m.prev, runs, func(r *GatewayState) *GatewayState { return r })
	if len(gone)+len(came) > len(runs)/2 || !m.edit(gone, came) { // most of it, or lost track: start over
		*m = mergedRuns{}
		m.edit(nil, runs)
	}
	m.prev = slices.Clone(runs) // (the caller may reuse its slice)
	return m.dups == 0
}

// edit takes the runs gone out and puts the runs that came in; false when a line
// to take out is not there. Many runs (a render's first merge) are counted on one
// core while their lines are gathered on another, and the lists sorted on both.
func (m *mergedRuns) edit(gone, came []*GatewayState) bool {
	if m.keys == nil { // (sized: a render's first merge counts every route's lines)
		var keys, hosts, backends int
		for _, r := range came {
			keys += len(r.Exact) + len(r.PrefixExact) + len(r.PrefixSorted) + len(r.Regex)
			hosts, backends = hosts+len(r.Hosts), backends+len(r.Backends)
		}
		m.keys, m.hosts, m.backends = make(map[string]int, keys), make(map[string]int, hosts), make(map[string]int, backends)
	}
	var e sortedEdits
	apart := len(gone)+len(came) >= editApartRuns
	counted := make(chan any, 1) // (what counting panicked with, if it did)
	countAll := func() {
		defer func() { counted <- recover() }()
		for _, r := range gone {
			m.countKeys(r, -1)
		}
		for _, r := range came {
			m.countKeys(r, 1)
		}
	}
	if apart {
		go countAll()
	} else {
		countAll()
	}
	for _, r := range gone {
		m.gather(r, -1, &e)
	}
	for _, r := range came {
		m.gather(r, 1, &e)
	}
	if p := <-counted; p != nil {
		panic(p)
	}
	found := make([]bool, len(m.lists))
	sortList := func(i int) {
		if sameLines(e.out[i], e.in[i]) {
			found[i] = true
			return // the runs that came bring the lines of those gone: the list stays
		}
		m.lists[i], found[i] = m.lists[i].edited(e.out[i], e.in[i], listText[i])
	}
	eachHereOrApart(apart || m.textSize() >= spliceApartSize, len(m.lists), sortList)
	return !slices.Contains(found, false)
}

// spliceApartSize is the size of the lists' texts from which edit splices them on
// every core: a change that touches three maps of 4 MB each copies 12 MB, bound by
// one core's memory bandwidth.
const spliceApartSize = 4 << 20

// textSize is the size of m's lists' texts.
func (m *mergedRuns) textSize() int {
	n := 0
	for _, l := range m.lists {
		n += l.text.Len()
	}
	return n
}

// editApartRuns is the number of runs from which edit spreads its work over the
// cores: a render's first merge, not a change's one run in and one out.
const editApartRuns = 16

// countKeys adds (d = 1) or takes out (d = -1) run r's keys and backends.
func (m *mergedRuns) countKeys(r *GatewayState, d int) {
	for _, list := range [][]string{r.Exact, r.PrefixExact, r.PrefixSorted, r.Regex} {
		for _, l := range list {
			m.dups += countShared(m.keys, lineKey(l), d)
		}
	}
	for _, b := range r.Backends {
		m.sharedBackends += countShared(m.backends, b.Name, d)
	}
}

// gather adds (d = 1) or takes out (d = -1) run r's hosts, and the lines it brings
// to the edits of the sorted lists.
func (m *mergedRuns) gather(r *GatewayState, d int, e *sortedEdits) {
	edit := &e.in
	if d < 0 {
		edit = &e.out
	}
	for h := range r.Hosts {
		if was := count(m.hosts, h, d); (d > 0 && was == 0) || (d < 0 && was == 1) {
			edit[listHosts] = append(edit[listHosts], hostLine(h))
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
func count[K comparable](counts map[K]int, k K, d int) (was int) {
	was = counts[k]
	if was+d <= 0 {
		delete(counts, k)
	} else {
		counts[k] = was + d
	}
	return was
}

// countShared is count that returns how the number of keys counted twice or more
// changes: 1, -1 or 0.
func countShared[K comparable](counts map[K]int, k K, d int) int {
	switch was := count(counts, k, d); {
	case was < 2 && was+d >= 2:
		return 1
	case was >= 2 && was+d < 2:
		return -1
	}
	return 0
}

// sameLines reports whether out and in hold the same lines, as many times each.
func sameLines(out, in []string) bool {
	if len(out) != len(in) {
		return false
	}
	if slices.Equal(out, in) {
		return true
	}
	n := make(map[string]int, len(out))
	for _, l := range out {
		n[l]++
	}
	for _, l := range in {
		if n[l]--; n[l] < 0 {
			return false
		}
	}
	return true
}
