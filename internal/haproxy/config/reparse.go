package config

import (
	"sort"
	"strings"
)

// Splice says how a configuration made by Reparsed differs from the one it was made
// from: Removed sections from index At replaced by Added ones (parsed again: new
// values, the same content for the first of them most often).
type Splice struct{ At, Removed, Added int }

// Reparsed is Parse(newText) made from c, the parse of oldText, when the two texts
// share their first pre and last suf bytes (whole lines: a route's backend added
// or taken out, a section edited). Only the sections the lines between touch are
// parsed again, from the header of the section before them (a line both texts
// have) to the header of the first section after them; the others are shared with
// c, those after moved by the lines gained or lost. c is left as it is. false when
// the lines between do not parse (Parse of the whole text says where).
func (c *Config) Reparsed(oldText, newText string, pre, suf int) (*Config, Splice, bool) {
	if pre+suf > min(len(oldText), len(newText)) {
		return nil, Splice{}, false
	}
	first := strings.Count(oldText[:pre], "\n") + 1                     // the first line that differs, in oldText
	after := first + strings.Count(oldText[pre:len(oldText)-suf], "\n") // the first line of the common end
	// lo: the last section whose header comes before the first line that differs
	// (-1: none, the text is parsed again from its start); hi: the first section
	// whose header is in the common end.
	lo := sort.Search(len(c.Sections), func(i int) bool { return c.SectionLine(i) >= first }) - 1
	hi := sort.Search(len(c.Sections), func(i int) bool { return c.SectionLine(i) >= after })
	from, startLine := 0, 1
	if lo >= 0 {
		from, startLine = LinesBack(oldText, pre, first-c.SectionLine(lo)), c.SectionLine(lo)
	}
	to := len(oldText)
	if hi < len(c.Sections) {
		to = LinesOn(oldText, len(oldText)-suf, c.SectionLine(hi)-after)
	}
	lo = max(lo, 0)
	mid := newText[from : to+len(newText)-len(oldText)]
	parsed, err := Parse(mid)
	if err != nil {
		return nil, Splice{}, false
	}
	added := parsed.Sections
	by := strings.Count(mid, "\n") - strings.Count(oldText[from:to], "\n")
	return c.spliced(lo, hi, added, startLine-1, by), Splice{At: lo, Removed: hi - lo, Added: len(added)}, true
}

// spliced is c with sections lo to hi replaced by added (parsed on their own: line
// first+1 is their first line), the sections after moved by lines.
func (c *Config) spliced(lo, hi int, added []*Section, first, lines int) *Config {
	delta := len(added) - (hi - lo)
	out := &Config{Sections: make([]*Section, 0, len(c.Sections)+delta)}
	out.Sections = append(append(append(out.Sections, c.Sections[:lo]...), added...), c.Sections[hi:]...)
	// The moves of the sections from lo on move those after the splice (at their new
	// index); the sections added are where they are, less the moves before lo.
	before := c.shiftAt(lo)
	for _, s := range c.shifts {
		if s.from <= lo {
			out.shifts = append(out.shifts, s)
		} else {
			out.shifts = append(out.shifts, lineShift{from: max(s.from, hi) + delta, by: s.by})
		}
	}
	for _, s := range added {
		s.move(first - before)
	}
	if lines != 0 {
		out.shifts = append(out.shifts, lineShift{from: lo + len(added), by: lines})
	}
	for _, i := range c.defaults {
		if i < lo {
			out.defaults = append(out.defaults, i)
		}
	}
	for i, s := range added {
		if s.Keyword == "defaults" {
			out.defaults = append(out.defaults, lo+i)
		}
	}
	for _, i := range c.defaults {
		if i >= hi {
			out.defaults = append(out.defaults, i+delta)
		}
	}
	if len(out.shifts) > maxShifts {
		return out.Flat()
	}
	return out
}

// LinesBack is the start of the line n lines before the line that starts at at.
func LinesBack(text string, at, n int) int {
	for ; n > 0 && at > 0; n-- {
		at = strings.LastIndexByte(text[:at-1], '\n') + 1
	}
	return at
}

// LinesOn is the start of the line n lines after the line that starts at at.
func LinesOn(text string, at, n int) int {
	for ; n > 0; n-- {
		i := strings.IndexByte(text[at:], '\n')
		if i < 0 {
			return len(text)
		}
		at += i + 1
	}
	return at
}
