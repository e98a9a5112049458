package config

import (
	"fmt"
	"strings"
)

// The writers for the output contexts a string taken from a Kubernetes object can
// land in, and the rules that keep it from meaning more than one value there. These
// are the only definitions: the renderer's writers, the check of every rendered
// file, the agent and the runtime client all use them (map entries: mapfile.go).

// QuoteWord writes s as exactly one word of an haproxy.cfg line. Words made
// only of characters HAProxy's line parser never interprets are written as they are;
// anything else is single-quoted (no escapes, no environment variables, no comments
// inside), with each single quote written as '\”. Control characters cannot be
// written in any form and are refused.
func QuoteWord(s string) (string, error) {
	if i := controlChar(s); i >= 0 {
		return "", &ContextError{Context: "config word", Value: s, Reason: describeControl(s[i])}
	}
	if s != "" && plainWord(s) {
		return s, nil
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
}

// QuoteLogFormatWord writes s as one word of an argument HAProxy reads as a
// log-format string (set-header values, return bodies with lf-string, ...): '%' is
// doubled so the text never becomes a sample fetch, then it is quoted as a word.
func QuoteLogFormatWord(s string) (string, error) {
	return QuoteWord(strings.ReplaceAll(s, "%", "%%"))
}

// CheckFetchArg accepts s as an argument of a sample fetch or converter written in
// a config word, e.g. the header name of req.hdr(<name>): HTTP token characters
// only, without those HAProxy's line or argument parsers interpret (# $ ' % , ( )).
func CheckFetchArg(s string) error {
	if s == "" {
		return &ContextError{Context: "sample-fetch argument", Value: s, Reason: "is empty"}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!&*+-.^_`|~", c) >= 0) {
			return &ContextError{Context: "sample-fetch argument", Value: s, Reason: fmt.Sprintf("holds %q, which HAProxy would interpret", c)}
		}
	}
	return nil
}

func plainWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("._:/@+=,*-[]", c) >= 0:
		default:
			return false
		}
	}
	return true
}
