package config

import (
	"sort"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// Edit is where two texts differ: oldText[OldFrom:OldTo] became
// newText[NewFrom:NewTo], whole lines. The edits of a pair are in ascending order,
// apart.
type Edit struct{ OldFrom, OldTo, NewFrom, NewTo int }

// Splice says how a configuration made by Reparsed differs from the one it was made
// from: Removed sections from index At (of the old configuration) replaced by Added
// ones (parsed again: new values, the same content for the first of them most
// often). The splices of a configuration are in ascending order of At.
type Splice struct{ At, Removed, Added int }

// Reparsed is Parse(newText) made from c, the parse of oldText, when the texts
// differ by edits (a route's backend added or taken out, a section edited). Only
// the sections an edit's lines touch are parsed again, from the header of the
// section before them (a line both texts have) to the header of the first section
// after them; the others are shared with c, those after an edit moved by the lines
// it gained or lost. c is left as it is. false when the lines edited do not parse
// (Parse of the whole text says where).
func (c *Config) Reparsed(oldText, newText string, edits []Edit) (*Config, []Splice, bool) {
	var windows []splicePart
	for _, e := range edits {
		if e.OldFrom > e.OldTo || e.NewFrom > e.NewTo || e.OldTo > len(oldText) || e.NewTo > len(newText) {
			return nil, nil, false
		}
		first := strings.Count(oldText[:e.OldFrom], "\n") + 1            // the first line edited, in oldText
		after := first + strings.Count(oldText[e.OldFrom:e.OldTo], "\n") // the first line after the edit
		// lo: the last section whose header comes before the first line edited (-1:
		// none, the text is parsed again from its start); hi: the first section whose
		// header comes after the edit.
		lo := sort.Search(len(c.Sections), func(i int) bool { return c.SectionLine(i) >= first }) - 1
		hi := sort.Search(len(c.Sections), func(i int) bool { return c.SectionLine(i) >= after })
		w := splicePart{lo: max(lo, 0), hi: hi, line: 1, to: len(oldText)}
		if lo >= 0 {
			w.from, w.line = LinesBack(bundle.TextOf(oldText), e.OldFrom, first-c.SectionLine(lo)), c.SectionLine(lo)
		}
		if hi < len(c.Sections) {
			w.to = LinesOn(bundle.TextOf(oldText), e.OldTo, c.SectionLine(hi)-after)
		}
		// (the text around an edit is the same on both sides)
		w.newFrom, w.newTo = w.from+e.NewFrom-e.OldFrom, w.to+e.NewTo-e.OldTo
		if n := len(windows); n > 0 && windows[n-1].hi > w.lo { // (two edits in one section's reach)
			windows[n-1].hi, windows[n-1].to, windows[n-1].newTo = w.hi, w.to, w.newTo
			continue
		}
		windows = append(windows, w)
	}
	for i := range windows {
		w := &windows[i]
		mid := newText[w.newFrom:w.newTo]
		parsed, err := Parse(mid)
		if err != nil {
			return nil, nil, false
		}
		w.added, w.lines = parsed.Sections, strings.Count(mid, "\n")-strings.Count(oldText[w.from:w.to], "\n")
	}
	splices := make([]Splice, len(windows))
	for i, w := range windows {
		splices[i] = Splice{At: w.lo, Removed: w.hi - w.lo, Added: len(w.added)}
	}
	return c.spliced(windows), splices, true
}

// splicePart is sections lo to hi of a configuration replaced by added, parsed on
// their own from the new text's newFrom to newTo (from and to in the old text, which
// started on line line there, of the text before the parts before it) that gained
// lines lines.
type splicePart struct {
	lo, hi         int
	from, to       int
	newFrom, newTo int
	line           int
	added          []*Section
	lines          int
}

// spliced is c with the parts (ascending, apart) replaced, the sections after each
// moved by the lines it gained or lost.
func (c *Config) spliced(parts []splicePart) *Config {
	n := len(c.Sections)
	for _, p := range parts {
		n += len(p.added) - (p.hi - p.lo)
	}
	out := &Config{Sections: make([]*Section, 0, n)}
	// newIndex is where c's section i is in out (a section replaced: where the
	// sections after its part start).
	newIndex := func(i int) int {
		d := 0
		for _, p := range parts {
			switch {
			case i >= p.hi:
				d += len(p.added) - (p.hi - p.lo)
			case i > p.lo:
				return p.lo + d + len(p.added)
			}
		}
		return i + d
	}
	at := 0
	for _, p := range parts {
		out.Sections = append(append(out.Sections, c.Sections[at:p.lo]...), p.added...)
		at = p.hi
	}
	out.Sections = append(out.Sections, c.Sections[at:]...)
	// c's moves move the same sections, at their new index; each part's lines move
	// the sections after it.
	for _, s := range c.shifts {
		out.shifts = append(out.shifts, lineShift{from: newIndex(s.from), by: s.by})
	}
	linesBefore := 0 // lines the parts before gained
	for _, p := range parts {
		end := newIndex(p.hi)
		if p.lines != 0 {
			out.shifts = append(out.shifts, lineShift{from: end, by: p.lines})
		}
		first := end - len(p.added)
		// (the sections added are where they are, less the moves kept before them)
		by := p.line - 1 + linesBefore - out.shiftAt(first)
		for _, s := range p.added {
			s.move(by)
		}
		linesBefore += p.lines
	}
	for i, s := range out.Sections {
		if s.Keyword == "defaults" {
			out.defaults = append(out.defaults, i)
		}
	}
	if len(out.shifts) > maxShifts {
		return out.Flat()
	}
	return out
}

// LinesBack is the start of the line n lines before the line that starts at at.
func LinesBack(text bundle.Text, at, n int) int {
	for ; n > 0 && at > 0; n-- {
		at = text.LastIndexByte(at-1, '\n') + 1
	}
	return at
}

// LinesOn is the start of the line n lines after the line that starts at at.
func LinesOn(text bundle.Text, at, n int) int {
	for ; n > 0; n-- {
		i := text.IndexByte(at, '\n')
		if i < 0 {
			return text.Len()
		}
		at = i + 1
	}
	return at
}
