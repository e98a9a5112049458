package plan

import (
	"slices"
	"sort"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// serverEdit is a desired haproxy.cfg that differs from the running one only in
// server lines of one backend (an endpoint moved, added or removed, a server's
// option changed). Its parse is the running one with that section parsed again and
// every other section shared, those after it moved by the lines it gained or lost
// (config.Replaced); placement leaves it as it is (the same backends), and the plan
// compares that section alone. A parse of the whole desired configuration, its layout,
// placement and the comparison of every section cost 140 ms at 50,000 backends for
// one server line.
type serverEdit struct {
	run, want *config.Config
	at        int // the section's index on both sides
}

// serverEdits turns the shortcut on (tests compare plans with and without it).
var serverEdits = true

// editOfServers finds the serverEdit that makes wantText of runText (run is its
// parse); false when the two differ otherwise.
func editOfServers(run *config.Config, runText, wantText bundle.Text) (serverEdit, bool) {
	if !serverEdits {
		return serverEdit{}, false
	}
	pre, suf := bundle.CommonLines(runText, wantText)
	runMid, wantMid := runText.Slice(pre, runText.Len()-suf), wantText.Slice(pre, wantText.Len()-suf)
	runLines, wantLines := strings.Count(runMid, "\n"), strings.Count(wantMid, "\n")
	if runLines+wantLines == 0 || !wholeLines(runMid) || !wholeLines(wantMid) || !serverLinesOnly(runMid) || !serverLinesOnly(wantMid) {
		return serverEdit{}, false
	}
	first := runText.CountByte(0, pre, '\n') + 1 // the first line after those the two begin with
	// The section of the lines: the one the first of run's is in, or, when lines
	// were only added, the one of the line before them.
	in := first
	if runLines == 0 {
		in--
	}
	at := sort.Search(len(run.Sections), func(i int) bool { return run.SectionLine(i) > in }) - 1
	if at < 0 {
		return serverEdit{}, false
	}
	sec, secLine := run.Sections[at], run.SectionLine(at)
	if sec.Keyword != "backend" && sec.Keyword != "listen" {
		return serverEdit{}, false
	}
	// The section's text: from its header (the same line on both sides) to the next
	// section (moved by the lines it gained or lost).
	from := config.LinesBack(runText, pre, first-secLine)
	to := runText.Len()
	if at+1 < len(run.Sections) {
		to = config.LinesOn(runText, runText.Len()-suf, run.SectionLine(at+1)-(first+runLines))
	}
	parsed, err := config.Parse(wantText.Slice(from, to+wantText.Len()-runText.Len()))
	if err != nil || len(parsed.Sections) != 1 {
		return serverEdit{}, false
	}
	cur := parsed.Sections[0]
	if cur.Keyword != sec.Keyword || !slices.Equal(cur.Args, sec.Args) {
		return serverEdit{}, false
	}
	return serverEdit{run: run, want: run.Replaced(at, cur, wantLines-runLines), at: at}, true
}

// wholeLines reports whether text is empty or ends a line.
func wholeLines(text string) bool { return text == "" || strings.HasSuffix(text, "\n") }

// serverLinesOnly reports whether every line of text is blank, a comment or a
// server line.
func serverLinesOnly(text string) bool {
	for line := range strings.Lines(text) {
		words, err := config.Words(strings.TrimRight(line, "\r\n"))
		if err != nil || len(words) > 0 && words[0] != "server" {
			return false
		}
	}
	return true
}

// defaultsOf is defaultsChain for section at of c without its layout: the defaults
// section it inherits from (the one its "from" names among those before it, else
// the last before it), then those each names with "from".
func defaultsOf(c *config.Config, at int) []*config.Section {
	var last *config.Section
	before := map[string]*config.Section{}
	for _, i := range c.Defaults() {
		if i >= at {
			break
		}
		s := c.Sections[i]
		last = s
		if s.Name != "" {
			before[s.Name] = s
		}
	}
	d := last
	if from := fromName(c.Sections[at]); from != "" {
		d = before[from]
	}
	return defaultsFrom(namedDefaults(c), d)
}
