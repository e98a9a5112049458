package validate

import (
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits that keep failure messages short enough to read in a terminal.
const (
	maxExcerptLines = 5
	maxDiffLines    = 6
	diffContext     = 2
	maxLineLen      = 160
)

// lineOf is the 1-based line number of byte offset off in text.
func lineOf(text string, off int) int {
	return strings.Count(text[:off], "\n") + 1
}

// lineAt is the whole line containing byte offset off.
func lineAt(text string, off int) string {
	start := strings.LastIndexByte(text[:off], '\n') + 1
	end := strings.IndexByte(text[off:], '\n')
	if end < 0 {
		return text[start:]
	}
	return text[start : off+end]
}

// quoteLine quotes a line, shortened to maxLineLen.
func quoteLine(s string) string {
	if len(s) > maxLineLen {
		s = s[:maxLineLen] + "…"
	}
	return strconv.Quote(s)
}

// numbered formats one source line as "    12 | text".
func numbered(n int, s string) string {
	if len(s) > maxLineLen {
		s = s[:maxLineLen] + "…"
	}
	return fmt.Sprintf("    %d | %s", n, s)
}

// excerpt shows where a missing pattern might have been expected: the lines that
// contain the longest prefix of the pattern's longest literal part (the near misses),
// or else the start of the text.
func excerpt(pattern, text string) string {
	if text == "" {
		return "  (target is empty)"
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	lower := strings.ToLower(text)
	lit := strings.ToLower(longestLiteral(pattern))
	for ; len(lit) >= 4; lit = trimLastRune(lit) {
		if !strings.Contains(lower, lit) {
			continue
		}
		var out []string
		for i, l := range lines {
			if strings.Contains(strings.ToLower(l), lit) {
				out = append(out, numbered(i+1, l))
				if len(out) == maxExcerptLines {
					break
				}
			}
		}
		return fmt.Sprintf("  lines containing %q:\n%s", lit, strings.Join(out, "\n"))
	}
	n := min(len(lines), maxExcerptLines)
	out := make([]string, n)
	for i := range n {
		out[i] = numbered(i+1, lines[i])
	}
	return fmt.Sprintf("  first %d of %d lines:\n%s", n, len(lines), strings.Join(out, "\n"))
}

func trimLastRune(s string) string {
	_, size := utf8.DecodeLastRuneInString(s)
	return strings.TrimSpace(s[:len(s)-size])
}

// longestLiteral is the longest run of literal characters in a regular expression
// (e.g. "backend" in `^backend\s+\S+`), used to find near misses.
func longestLiteral(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return ""
	}
	best := ""
	var walk func(*syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		if r.Op == syntax.OpLiteral && r.Flags&syntax.FoldCase == 0 && len(string(r.Rune)) > len(best) {
			best = string(r.Rune)
		}
		for _, s := range r.Sub {
			walk(s)
		}
	}
	walk(re.Simplify())
	return strings.TrimSpace(best)
}

// unifiedDiff is a compact unified-style diff of the first differing region of two
// texts: a few lines of context, then the old (-) and new (+) lines.
func unifiedDiff(oldName, newName, want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var out []string
	out = append(out, "    --- "+oldName, "    +++ "+newName,
		fmt.Sprintf("    @@ line %d @@", p+1))
	for i := max(0, p-diffContext); i < p; i++ {
		out = append(out, "     "+a[i])
	}
	out = appendDiffLines(out, "-", a[p:len(a)-s])
	out = appendDiffLines(out, "+", b[p:len(b)-s])
	return strings.Join(out, "\n")
}

func appendDiffLines(out []string, sign string, lines []string) []string {
	for i, l := range lines {
		if i == maxDiffLines {
			return append(out, fmt.Sprintf("    %s… (%d more lines)", sign, len(lines)-i))
		}
		if len(l) > maxLineLen {
			l = l[:maxLineLen] + "…"
		}
		out = append(out, "    "+sign+l)
	}
	return out
}
