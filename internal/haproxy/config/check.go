package config

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// The checks of rendered files: every line of haproxy.cfg, a map or a crt-list
// must be read by HAProxy as exactly what was written.

// ContextError says why a string cannot be written into an output context.
type ContextError struct {
	Context string // "map key", "map value", "config word", ...
	Value   string
	Reason  string
}

func (e *ContextError) Error() string {
	v := e.Value
	if len(v) > 60 {
		v = v[:60] + "…"
	}
	return fmt.Sprintf("%s %q %s", e.Context, v, e.Reason)
}

// controlChar returns the first control character of s (C0 or DEL), or -1.
func controlChar(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return i
		}
	}
	return -1
}

// ControlProblem says which control character s holds ("holds a newline"), or "".
// No output context can hold one.
func ControlProblem(s string) string {
	if i := controlChar(s); i >= 0 {
		return describeControl(s[i])
	}
	return ""
}

func describeControl(c byte) string {
	switch c {
	case 0:
		return "holds a NUL byte"
	case '\n':
		return "holds a newline"
	case '\r':
		return "holds a carriage return"
	case '\t':
		return "holds a tab"
	}
	return fmt.Sprintf("holds the control character 0x%02x", c)
}

// LineError is a problem with one line of a rendered file.
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

func lineErr(n int, format string, a ...any) error {
	return &LineError{Line: n + 1, Err: fmt.Errorf(format, a...)}
}

// eachLine checks every line of content, numbered from 0, up to the first error
// (without a slice of all the lines: the renderer checks every file it writes). A
// large content's second half is checked on another core meanwhile; the error
// returned is still the first line's that fails.
func eachLine(content string, check func(n int, line string) error) error {
	if len(content) < splitCheckMin || runtime.GOMAXPROCS(0) < 2 {
		return eachLineFrom(0, content, check)
	}
	half := strings.IndexByte(content[len(content)/2:], '\n')
	if half < 0 {
		return eachLineFrom(0, content, check)
	}
	cut := len(content)/2 + half
	first, second := content[:cut], content[cut+1:]
	secondErr := make(chan error, 1)
	go func() { secondErr <- eachLineFrom(strings.Count(first, "\n")+1, second, check) }()
	err := eachLineFrom(0, first, check)
	if err2 := <-secondErr; err == nil {
		err = err2
	}
	return err
}

// splitCheckMin is the size from which eachLine checks a content's halves on two
// cores: a full render's haproxy.cfg and larger maps (a megabyte at 5,000 routes).
const splitCheckMin = 256 << 10

// eachLineFrom is eachLine of content whose first line is line n.
func eachLineFrom(n int, content string, check func(n int, line string) error) error {
	for ; ; n++ {
		line, rest, more := strings.Cut(content, "\n")
		if err := check(n, line); err != nil {
			return err
		}
		if !more {
			return nil
		}
		content = rest
	}
}

// CheckCrtList accepts a crt-list whose lines hold no control characters.
func CheckCrtList(content string) error {
	for n, line := range strings.Split(content, "\n") {
		if i := controlChar(strings.ReplaceAll(line, "\t", " ")); i >= 0 {
			return lineErr(n, "%s", describeControl(line[i]))
		}
	}
	return nil
}

// Check applies the check of a file's kind to its content.
func Check(kind bundle.Kind, content string) error {
	switch kind {
	case bundle.KindConfig:
		return CheckConfig(content)
	case bundle.KindMap:
		return CheckMapFile(content)
	case bundle.KindCrtList:
		return CheckCrtList(content)
	}
	return nil
}

// CheckConfig accepts a rendered haproxy.cfg whose lines HAProxy reads whole: no
// control characters besides tabs, every quote closed, at most MaxLineWords words.
func CheckConfig(content string) error { return eachLine(content, checkConfigLine) }

// Classes of a line's bytes for checkConfigLine: a control character (a tab is
// not), a quote or backslash, anything else.
const (
	byteOther = iota
	byteControl
	byteQuote
)

var lineClass = func() (t [256]byte) {
	for c := range 0x20 {
		t[c] = byteControl
	}
	t['\t'], t[0x7f] = byteOther, byteControl
	t['"'], t['\''], t['\\'] = byteQuote, byteQuote, byteQuote
	return t
}()

// checkConfigLine checks line n (from 0) of a haproxy.cfg. A line without quotes or
// backslashes (nearly all) is checked in one pass without splitting it into words,
// and its words are counted only when it is long enough to hold too many (each a
// byte and a blank): every line of a full render passes here, and the loop that
// counts takes half as long again.
func checkConfigLine(n int, line string) error {
	words, plain := 0, true
	if len(line) <= 2*MaxLineWords {
		for i := 0; i < len(line); i++ {
			switch lineClass[line[i]] {
			case byteControl:
				return lineErr(n, "%s", describeControl(line[i]))
			case byteQuote:
				plain = false
			}
		}
	} else {
		comment, inWord := false, false
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case lineClass[c] == byteControl:
				return lineErr(n, "%s", describeControl(c))
			case lineClass[c] == byteQuote:
				plain = false
			case comment:
			case c == ' ' || c == '\t':
				inWord = false
			case c == '#':
				comment = true
			case !inWord:
				inWord, words = true, words+1
			}
		}
	}
	if !plain {
		w, err := Words(line)
		if err != nil {
			return &LineError{Line: n + 1, Err: err}
		}
		words = len(w)
	}
	if words > MaxLineWords {
		return lineErr(n, "%d words, HAProxy reads at most %d per line: %.60q", words, MaxLineWords, strings.TrimSpace(line))
	}
	return nil
}
