package config

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Chains of edits that add or take out a server line of one backend, each made
// with Replaced from the backend's text parsed alone, give what a parse of the
// whole text gives (Flat, and the lines SectionLine and DirectiveLine say), past
// maxShifts several times; the configuration edited is left as it was.
func TestReplacedIsAParseOfTheEditedText(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lines := []string{"global", "    maxconn 10", "defaults", "    mode http", "frontend fe", "    bind :80"}
	for b := range 40 {
		lines = append(lines, fmt.Sprintf("backend be_%d", b), "    balance roundrobin")
		for s := range 1 + rng.IntN(3) {
			lines = append(lines, fmt.Sprintf("    server s%d 10.0.%d.%d:80", s, b, s))
		}
	}
	text := func() string { return strings.Join(lines, "\n") + "\n" }
	c, err := Parse(text())
	if err != nil {
		t.Fatal(err)
	}
	for step := range 5 * maxShifts {
		at := 2 + rng.IntN(len(c.Sections)-2) // a section after global and defaults (the frontend is skipped)
		if c.Sections[at].Keyword != "backend" {
			continue
		}
		start, end := c.SectionLine(at)-1, len(lines) // 0-based lines of the section
		if at+1 < len(c.Sections) {
			end = c.SectionLine(at+1) - 1
		}
		section := slices.Clone(lines[start:end])
		by := 1
		if len(section) > 2 && rng.IntN(2) == 0 { // a server taken out
			i := 2 + rng.IntN(len(section)-2)
			section, by = slices.Delete(section, i, i+1), -1
		} else {
			section = append(section, fmt.Sprintf("    server n%d 10.9.%d.%d:80", step, step/250, step%250))
		}
		lines = slices.Concat(lines[:start], section, lines[end:])
		parsed, err := Parse(strings.Join(section, "\n") + "\n")
		if err != nil {
			t.Fatal(err)
		}
		before := linesOf(c)
		next := c.Replaced(at, parsed.Sections[0], by)
		if !slices.Equal(linesOf(c), before) {
			t.Fatalf("step %d: the configuration edited changed", step)
		}
		whole, err := Parse(text())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(next.Flat(), whole) {
			t.Fatalf("step %d: the derived configuration is not the parse of its text", step)
		}
		for i, s := range next.Sections {
			if next.SectionLine(i) != whole.Sections[i].Line {
				t.Fatalf("step %d: section %d on line %d, want %d", step, i, next.SectionLine(i), whole.Sections[i].Line)
			}
			for j, d := range s.Directives {
				if next.DirectiveLine(i, d) != whole.Sections[i].Directives[j].Line {
					t.Fatalf("step %d: section %d directive %d on line %d, want %d", step, i, j, next.DirectiveLine(i, d), whole.Sections[i].Directives[j].Line)
				}
			}
		}
		if len(next.shifts) > maxShifts {
			t.Fatalf("step %d: %d moves kept", step, len(next.shifts))
		}
		c = next
	}
}

// linesOf is the line of each section and directive of c, and its text.
func linesOf(c *Config) []string {
	out := []string{c.String()}
	for i, s := range c.Sections {
		out = append(out, fmt.Sprint(c.SectionLine(i)))
		for _, d := range s.Directives {
			out = append(out, fmt.Sprint(c.DirectiveLine(i, d)))
		}
	}
	return out
}

// A defaults section replaced by another kind, and back, is taken out of and put
// back into Defaults.
func TestReplacedKeepsDefaults(t *testing.T) {
	c, err := Parse("global\ndefaults a\n    mode http\nbackend b\n    server s 10.0.0.1:80\n")
	if err != nil {
		t.Fatal(err)
	}
	section := func(text string) *Section {
		p, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		return p.Sections[0]
	}
	noDefaults := c.Replaced(1, section("backend x\n    mode http\n"), 0)
	if len(noDefaults.Defaults()) != 0 || !slices.Equal(c.Defaults(), []int{1}) {
		t.Fatalf("defaults %v (was %v)", noDefaults.Defaults(), c.Defaults())
	}
	if back := noDefaults.Replaced(1, section("defaults z\n    mode tcp\n"), 0); !slices.Equal(back.Defaults(), []int{1}) {
		t.Fatalf("defaults %v", back.Defaults())
	}
}
