package config

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// Random edits of a configuration — sections added, taken out or replaced, lines
// added, taken out or changed anywhere (headers, the preprocessor lines before the
// first section, blank and comment lines), several at once — each made by Reparsed
// from the parse before it, given as one edit or as each run of lines that differs, give what a parse of the whole text gives, lines and
// defaults included, past maxShifts many times; the parse edited is left as it was.
func TestReparsedIsAParseOfTheEditedText(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	section := func(n int) []string {
		switch rng.IntN(6) {
		case 0:
			return []string{fmt.Sprintf("defaults d%d", n), "    mode http"}
		case 1:
			return []string{"", "# a comment", fmt.Sprintf("frontend fe%d", n), "    bind :80"}
		}
		s := []string{fmt.Sprintf("backend be_%d", n), "    balance roundrobin"}
		for i := range rng.IntN(3) {
			s = append(s, fmt.Sprintf("    server s%d 10.0.%d.%d:80", i, n%250, i))
		}
		return s
	}
	lines := []string{".if defined(X)", ".endif", "global", "    maxconn 10", "defaults", "    mode http"}
	for n := range 60 {
		lines = append(lines, section(n)...)
	}
	text := strings.Join(lines, "\n") + "\n"
	c, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	derived := 0
	for step := range 1200 {
		next := slices.Clone(lines)
		for range 1 + rng.IntN(2) {
			at := rng.IntN(len(next) + 1)
			switch rng.IntN(6) {
			case 0:
				next = slices.Insert(next, at, section(1000+step)...)
			case 1:
				if at < len(next) {
					next = slices.Delete(next, at, min(len(next), at+1+rng.IntN(5)))
				}
			case 2:
				next = slices.Insert(next, at, fmt.Sprintf("    server x%d 10.9.0.%d:80", step, step%250))
			case 3:
				if at < len(next) {
					next[at] = fmt.Sprintf("backend moved_%d", step)
				}
			case 4:
				next = slices.Insert(next, at, "", "# note")
			default:
				if at < len(next) {
					next[at] = fmt.Sprintf("    timeout server %ds", step)
				}
			}
		}
		nextText := strings.Join(next, "\n") + "\n"
		whole, wholeErr := Parse(nextText)
		edits := editsOf(text, nextText, step%2 == 0)
		before := linesOf(c)
		got, _, ok := c.Reparsed(text, nextText, edits)
		if !slices.Equal(linesOf(c), before) {
			t.Fatalf("step %d: the parse edited changed", step)
		}
		if wholeErr != nil {
			if ok {
				t.Fatalf("step %d: derived a parse of a text that does not parse (%v)", step, wholeErr)
			}
			continue // (the text before stays)
		}
		if !ok {
			t.Fatalf("step %d: no parse derived of a text that parses", step)
		}
		derived++
		if !reflect.DeepEqual(got.Flat(), whole) {
			t.Fatalf("step %d: the derived configuration is not the parse of its text", step)
		}
		if !slices.Equal(linesOf(got), linesOf(whole)) || !slices.Equal(got.Defaults(), whole.Defaults()) {
			t.Fatalf("step %d: lines or defaults differ from the parse of the text", step)
		}
		if len(got.shifts) > maxShifts {
			t.Fatalf("step %d: %d moves kept", step, len(got.shifts))
		}
		c, lines, text = got, next, nextText
	}
	if derived < 600 {
		t.Fatalf("only %d of 1,200 edits parsed", derived)
	}
}

// editsOf is where a and b differ: the lines between those they begin and end with,
// or (apart) each run of lines that differs.
func editsOf(a, b string, apart bool) []Edit {
	pre, suf := bundle.CommonLines(bundle.TextOf(a), bundle.TextOf(b))
	if !apart {
		return []Edit{{OldFrom: pre, OldTo: len(a) - suf, NewFrom: pre, NewTo: len(b) - suf}}
	}
	la, lb := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	hunks, ok := bundle.Hunks(la, lb, 1000)
	if !ok {
		panic("no hunks")
	}
	at := func(lines []string, n int) int { return len(strings.Join(lines[:n], "")) }
	var edits []Edit
	for _, h := range hunks {
		edits = append(edits, Edit{OldFrom: at(la, h.A0), OldTo: at(la, h.A1), NewFrom: at(lb, h.B0), NewTo: at(lb, h.B1)})
	}
	return edits
}
