package plan

import (
	"slices"
	"strings"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// parsedConfigs remembers the last parses of haproxy.cfg texts. With backends in
// pool slots every plan parses the running, the desired and the placed
// configuration, and a route's change leaves all three as they were: parsed
// once, not three times per change. A parse is shared: the planner only reads it.
//
// A parse no plan will ask for again is forgotten at once, since each holds a
// whole configuration (10 MB at 50,000 routes) and its text: the desired text a
// plan placed anew, and the config a plan was made from once the pods run the
// planned one (see ran).
var parsedConfigs = &configParses{}

// configParsesKept bounds the remembered parses (each fleet's running and placed
// configurations).
const configParsesKept = 8

type configParse struct {
	text   bundle.Text
	cfg    *config.Config
	err    error
	from   bundle.Text // the running configuration this one was planned from
	layout *layout     // (layoutOf)
	// base is the parse cfg was derived from (config.Reparsed) and splices what
	// changed: its layout is derived from base's.
	base    *config.Config
	splices []config.Splice
	spent   bool // a desired text placed anew: kept to derive the next one from
}

type configParses struct {
	mu   sync.Mutex
	list []configParse // oldest first
}

// parse is config.Parse(text), remembered; derived from the remembered parse whose
// text shares the most lines with text (config.Reparsed) when that is most of it,
// or from that of near when it is remembered and does (a placed configuration from
// the running one: the config diff then passes what they share by its pointer).
func (c *configParses) parse(text bundle.Text, near ...bundle.Text) (*config.Config, error) {
	c.mu.Lock()
	var bases []configParse
	nearFound := false
	for i := len(c.list) - 1; i >= 0; i-- {
		p := c.list[i]
		if p.text.Equal(text) {
			c.mu.Unlock()
			return p.cfg, p.err
		}
		switch {
		case p.err != nil:
		case !nearFound && slices.ContainsFunc(near, p.text.Equal):
			bases, nearFound = slices.Insert(bases, 0, p), true
		case len(bases) < derivedFrom:
			bases = append(bases, p)
		}
	}
	c.mu.Unlock()
	if p, ok := derive(bases, text, nearFound); ok {
		return c.keep(p).cfg, nil
	}
	cfg, err := config.Parse(text.String())
	p := c.keep(configParse{text: text, cfg: cfg, err: err})
	return p.cfg, p.err
}

// derivedFrom is how many of the latest parses parse compares a text with.
const derivedFrom = 3

// derivedParses turns derive, and diffInOrder that reads what derived parses share,
// on (tests compare plans with and without them).
var derivedParses = true

// derive is the parse of text made from the base sharing the most lines with it,
// when they share most of them; from the first when near and it does. The lines a
// base shares at the start and end of the texts decide when they are most of the
// text; else the runs that differ are found for each (a backend whose name sorts
// first, placed: the text differs near its start and near its end).
func derive(bases []configParse, t bundle.Text, near bool) (configParse, bool) {
	if !derivedParses || len(bases) == 0 {
		return configParse{}, false
	}
	type candidate struct {
		base     configParse
		pre, suf int
	}
	cands := make([]candidate, 0, len(bases))
	for i, b := range bases {
		pre, suf := bundle.CommonLines(b.text, t)
		cands = append(cands, candidate{b, pre, suf})
		if i == 0 && near && 2*(pre+suf) >= t.Len() {
			break // (most of it, before the runs are looked for)
		}
	}
	// (the runs that differ are looked for in the texts as strings: a parse reads
	// the text whole, String keeps it)
	text := t.String()
	best := slices.MaxFunc(cands, func(x, y candidate) int { return (x.pre + x.suf) - (y.pre + y.suf) })
	var edits []config.Edit
	if near { // (the first, when it shares most of the text once the runs that differ are found)
		if e := lineEdits(bases[0].text.String(), text, cands[0].pre, cands[0].suf); 2*sharedBytes(text, e) >= len(text) {
			best, edits = cands[0], e
		}
	}
	if edits == nil {
		edits = lineEdits(best.base.text.String(), text, best.pre, best.suf)
	}
	if bestShared := sharedBytes(text, edits); 2*bestShared < len(text) {
		for _, c := range cands {
			if c.base.cfg == best.base.cfg {
				continue
			}
			e := lineEdits(c.base.text.String(), text, c.pre, c.suf)
			if shared := sharedBytes(text, e); shared > bestShared {
				best, edits, bestShared = c, e, shared
			}
		}
		if 2*bestShared < len(text) {
			return configParse{}, false
		}
	}
	cfg, splices, ok := best.base.cfg.Reparsed(best.base.text.String(), text, edits)
	if !ok {
		return configParse{}, false
	}
	return configParse{text: t, cfg: cfg, base: best.base.cfg, splices: splices}, true
}

// sharedBytes is how much of text the edits leave as it was.
func sharedBytes(text string, edits []config.Edit) int {
	n := len(text)
	for _, e := range edits {
		n -= e.NewTo - e.NewFrom
	}
	return n
}

// lineEdits is where a and b differ, given that they share their first pre and last
// suf bytes: the lines between as one edit, or, when those are many, the runs of
// lines that differ among them (placing a route's backend edits the configuration
// where the backend goes and where the pool slot it takes was).
func lineEdits(a, b string, pre, suf int) []config.Edit {
	return splitEdit(a, b, config.Edit{OldFrom: pre, OldTo: len(a) - suf, NewFrom: pre, NewTo: len(b) - suf}, maxSplits)
}

// splitEdit is edit e of a into b as the runs of lines that differ within it: the
// line at the middle of a's side is looked for in b's, and the lines the two share
// around it are taken out of the edit; each side is split again, depth times. (Any
// lines both share, in place, make a valid split: a line found elsewhere than where
// it belongs only leaves a larger edit.)
func splitEdit(a, b string, e config.Edit, depth int) []config.Edit {
	ra, rb := a[e.OldFrom:e.OldTo], b[e.NewFrom:e.NewTo]
	if depth == 0 || len(ra) < splitEditsFrom {
		return []config.Edit{e}
	}
	m := strings.LastIndexByte(ra[:len(ra)/2], '\n') + 1
	n := strings.IndexByte(ra[m:], '\n')
	j := -1
	if n >= 0 {
		j = strings.Index(rb, ra[m:m+n+1])
	}
	if j < 0 {
		return []config.Edit{e}
	}
	back, fwd := commonSuffixLen(ra[:m], rb[:j]), commonPrefixLen(ra[m:], rb[j:])
	start, stop := m-back, m+fwd // the shared run in ra; at j-back and j+fwd in rb
	if start > 0 || j-back > 0 { // (a run's start is a line start on both sides; else the first after a newline both have)
		nl := strings.IndexByte(ra[start:stop], '\n')
		if nl < 0 {
			return []config.Edit{e}
		}
		start += nl + 1
	}
	if stop < len(ra) || j+fwd < len(rb) {
		stop = start + strings.LastIndexByte(ra[start:stop], '\n') + 1
	}
	if start >= stop {
		return []config.Edit{e}
	}
	nstart, nstop := start+j-m, stop+j-m
	var out []config.Edit
	for _, side := range []config.Edit{
		{OldFrom: e.OldFrom, OldTo: e.OldFrom + start, NewFrom: e.NewFrom, NewTo: e.NewFrom + nstart},
		{OldFrom: e.OldFrom + stop, OldTo: e.OldTo, NewFrom: e.NewFrom + nstop, NewTo: e.NewTo},
	} {
		if side.OldFrom < side.OldTo || side.NewFrom < side.NewTo {
			out = append(out, splitEdit(a, b, side, depth-1)...)
		}
	}
	return out
}

// commonPrefixLen is how many bytes a and b begin with alike; commonSuffixLen how
// many they end with.
func commonPrefixLen(a, b string) int {
	n, i := min(len(a), len(b)), 0
	for i+64 <= n && a[i:i+64] == b[i:i+64] {
		i += 64
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffixLen(a, b string) int {
	n, i := min(len(a), len(b)), 0
	for i+64 <= n && a[len(a)-i-64:len(a)-i] == b[len(b)-i-64:len(b)-i] {
		i += 64
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// An edit of more than splitEditsFrom bytes is looked into for lines it shares,
// maxSplits times (a variable: tests split every edit).
var splitEditsFrom = 64 << 10

const maxSplits = 4

// keep remembers a parse (made by parse, or otherwise: serverEdit) unless one of its
// text is remembered, and returns the one remembered.
func (c *configParses) keep(p configParse) configParse {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.list {
		if q.text.Equal(p.text) {
			return q
		}
	}
	if len(c.list) == configParsesKept {
		c.list = slices.Delete(c.list, 0, 1)
	}
	c.list = append(c.list, p)
	return p
}

// ran is parse for a running configuration: a pod runs text, so the configuration
// text was planned from no longer runs where the planner plans (a pod left behind
// parses it again).
func (c *configParses) ran(text bundle.Text) (*config.Config, error) {
	cfg, err := c.parse(text)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.list {
		if p.text.Equal(text) && p.from.Len() > 0 && !p.from.Equal(text) {
			c.forget(p.from)
			break
		}
	}
	return cfg, err
}

// planned records that placed was planned from running, in place of desired: the
// desired text, placed anew, is asked for by no later plan, but the next desired
// text is derived from its parse (the last one only is kept).
func (c *configParses) planned(running, desired, placed bundle.Text) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !desired.Equal(placed) && !desired.Equal(running) {
		c.list = slices.DeleteFunc(c.list, func(p configParse) bool { return p.spent })
		for i := range c.list {
			if c.list[i].text.Equal(desired) {
				c.list[i].spent = true
			}
		}
	}
	for i := range c.list {
		if c.list[i].text.Equal(placed) {
			c.list[i].from = running
		}
	}
}

func (c *configParses) forget(text bundle.Text) {
	c.list = slices.DeleteFunc(c.list, func(p configParse) bool { return p.text.Equal(text) })
}
