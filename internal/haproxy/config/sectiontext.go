package config

import (
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// Sections found in a text without parsing it: a reader of one section of a large
// configuration (an endpoint's backend) parses that section alone.

// StartsSection reports whether line's first word is a section keyword, or line is
// a preprocessor line (a section read alone would lose the block it is in).
func StartsSection(line string) bool {
	l := strings.TrimLeft(line, " \t")
	if IsPreprocessor(l) {
		return true
	}
	word, _, _ := strings.Cut(strings.TrimRight(l, "\r\n"), " ")
	word, _, _ = strings.Cut(word, "\t")
	return IsSectionKeyword(word)
}

// IsPreprocessor reports whether line (its leading blanks trimmed) is a
// preprocessor line (".if", ".endif", ".notice", …).
func IsPreprocessor(line string) bool { return strings.HasPrefix(line, ".") }

// SectionStart is where the section that holds the line before at (a line start)
// begins: the line that starts it, found going back from at.
func SectionStart(text bundle.Text, at int) (int, bool) {
	for end := at; end > 0; {
		start := text.LastIndexByte(end-1, '\n') + 1
		if StartsSection(text.Slice(start, end)) {
			return start, true
		}
		end = start
	}
	return 0, false
}

// SectionEnd is where the first line at or after at (a line start) that starts a
// section begins, or the text's end.
func SectionEnd(text bundle.Text, at int) int {
	for at < text.Len() {
		end := text.IndexByte(at, '\n')
		if end < 0 {
			end = text.Len() - 1
		}
		if StartsSection(text.Slice(at, end+1)) {
			return at
		}
		at = end + 1
	}
	return text.Len()
}
