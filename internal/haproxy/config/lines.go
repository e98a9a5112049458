package config

import "slices"

// A configuration made from another by one section parsed again (a backend's
// server lines edited) shares the other sections with it, and those after the
// edited one have moved by the lines it gained or lost. The move is kept beside
// them instead of in copies of each (50,000 backends' directives copied for one
// server line added): SectionLine and DirectiveLine are where a section and a
// directive are; Section.Line and Directive.Line are where they were in the parse
// that made them.

// lineShift: the sections from index from on are by lines further on.
type lineShift struct{ from, by int }

// maxShifts bounds the moves a configuration keeps: past it, Replaced gives its
// sections moved (Flat), a copy every few dozen edits instead of every edit.
const maxShifts = 32

// SectionLine is the line section i of c starts on.
func (c *Config) SectionLine(i int) int { return c.Sections[i].Line + c.shiftAt(i) }

// DirectiveLine is the line directive d of section i of c is on.
func (c *Config) DirectiveLine(i int, d Directive) int { return d.Line + c.shiftAt(i) }

func (c *Config) shiftAt(i int) int {
	n := 0
	for _, s := range c.shifts {
		if i >= s.from {
			n += s.by
		}
	}
	return n
}

// Replaced is c with section at replaced by s, a parse of the section's new text
// (which starts where the section did; Replaced keeps s and moves it there), and
// the sections after it moved by lines; c's other sections are shared, c is left
// as it was.
func (c *Config) Replaced(at int, s *Section, lines int) *Config {
	out := &Config{Sections: slices.Clone(c.Sections), shifts: slices.Clip(c.shifts), defaults: c.defaults}
	s.move(c.Sections[at].Line - s.Line) // (kept as c keeps the section: the moves before it apply to it)
	out.Sections[at] = s
	if c.Sections[at].Keyword == "defaults" || s.Keyword == "defaults" { // (never a server edit)
		out.defaults = nil
		for i, x := range out.Sections {
			if x.Keyword == "defaults" {
				out.defaults = append(out.defaults, i)
			}
		}
	}
	if lines != 0 {
		out.shifts = append(out.shifts, lineShift{from: at + 1, by: lines})
	}
	if len(out.shifts) > maxShifts {
		return out.Flat()
	}
	return out
}

// Flat is c with every section's lines where they are and no moves kept: the
// sections that moved are copies.
func (c *Config) Flat() *Config {
	if len(c.shifts) == 0 {
		return c
	}
	at := make([]int, len(c.Sections)+1) // what each section moved by, summed below
	for _, s := range c.shifts {
		at[min(s.from, len(c.Sections))] += s.by
	}
	out := &Config{Sections: make([]*Section, len(c.Sections)), defaults: c.defaults}
	by := 0
	for i, s := range c.Sections {
		if by += at[i]; by == 0 {
			out.Sections[i] = s
			continue
		}
		m := *s
		m.Directives = slices.Clone(s.Directives)
		m.move(by)
		out.Sections[i] = &m
	}
	return out
}

// move puts s and its directives n lines further on.
func (s *Section) move(n int) {
	if n == 0 {
		return
	}
	s.Line += n
	for i := range s.Directives {
		s.Directives[i].Line += n
	}
}
