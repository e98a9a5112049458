package bundle

import (
	"fmt"
	"strings"
)

// The output contexts a string taken from a Kubernetes object can land in, and the
// rules that keep it from meaning more than one value there. These are the only
// definitions: the renderer's writers, the check of every rendered file, the agent
// and the runtime client all use them.

// MaxMapLine is the longest map-file line ("key value", without the newline) a bundle
// may hold. HAProxy 2.6 reads map files with a tune.bufsize (16 KiB) buffer and takes
// the rest of a longer line as a second entry; the margin keeps small bufsize changes safe.
const MaxMapLine = 16000

// MaxConfigWords is HAProxy's limit on the words of one configuration line
// (MAX_LINE_ARGS): later words are dropped with only a warning.
const MaxConfigWords = 64

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

// CheckMapKey accepts a key HAProxy reads back whole from a map file and from the
// runtime API: not empty, no whitespace or control character (they end the key), no
// leading '#' (a comment line), no trailing "<<" (a runtime payload marker).
func CheckMapKey(key string) error {
	bad := func(reason string) error { return &ContextError{Context: "map key", Value: key, Reason: reason} }
	switch {
	case key == "":
		return bad("is empty")
	case key[0] == '#':
		return bad("starts with '#' (a comment line in a map file)")
	case strings.HasSuffix(key, "<<"):
		return bad(`ends with "<<" (a runtime API payload marker)`)
	case len(key) > MaxMapLine:
		return bad(fmt.Sprintf("is %d bytes long (the limit of a map line is %d)", len(key), MaxMapLine))
	}
	if i := controlChar(key); i >= 0 {
		return bad(describeControl(key[i]))
	}
	if strings.ContainsRune(key, ' ') {
		return bad("holds a space (it would end the key)")
	}
	return nil
}

// CheckMapValue accepts a value HAProxy reads back whole: no control character, no
// leading or trailing blank (the file reader and the output normaliser drop them),
// no trailing "<<".
func CheckMapValue(value string) error {
	bad := func(reason string) error { return &ContextError{Context: "map value", Value: value, Reason: reason} }
	if i := controlChar(value); i >= 0 {
		return bad(describeControl(value[i]))
	}
	switch {
	case strings.HasSuffix(value, "<<"):
		return bad(`ends with "<<" (a runtime API payload marker)`)
	case strings.TrimSpace(value) != value:
		return bad("starts or ends with a space")
	case len(value) > MaxMapLine:
		return bad(fmt.Sprintf("is %d bytes long (the limit of a map line is %d)", len(value), MaxMapLine))
	}
	return nil
}

// CheckMapEntry accepts a key and value whose map-file line HAProxy reads as exactly
// this entry.
func CheckMapEntry(key, value string) error {
	if err := CheckMapKey(key); err != nil {
		return err
	}
	if err := CheckMapValue(value); err != nil {
		return err
	}
	if n := len(key) + 1 + len(value); n > MaxMapLine {
		return &ContextError{Context: "map entry", Value: key, Reason: fmt.Sprintf("makes a %d-byte line (the limit is %d)", n, MaxMapLine)}
	}
	return nil
}

// SplitMapLine splits one map-file line the way HAProxy 2.6's file reader does: a
// '#' in the first byte makes a comment; leading blanks are skipped, the key runs to
// the first blank, the value follows the next blanks, trailing blanks dropped. ok is
// false for lines HAProxy skips (comments and blank lines).
func SplitMapLine(line string) (key, value string, ok bool) {
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "#") {
		return "", "", false
	}
	line = strings.Trim(line, " \t")
	if line == "" {
		return "", "", false
	}
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		return line, "", true
	}
	return line[:i], strings.TrimLeft(line[i:], " \t"), true
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

// CheckMapFile accepts a rendered map whose every line HAProxy reads as the entry it
// shows: each line passes CheckMapEntry and fits MaxMapLine.
func CheckMapFile(content string) error {
	for n, line := range strings.Split(content, "\n") {
		if len(line) > MaxMapLine {
			return lineErr(n, "%d bytes long (the limit of a map line is %d)", len(line), MaxMapLine)
		}
		if i := strings.IndexByte(line, 0); i >= 0 {
			return lineErr(n, "holds a NUL byte")
		}
		key, value, ok := SplitMapLine(line)
		if !ok {
			continue
		}
		if err := CheckMapEntry(key, value); err != nil {
			return &LineError{Line: n + 1, Err: err}
		}
	}
	return nil
}

// QuoteConfigWord writes s as exactly one word of an haproxy.cfg line. Words made
// only of characters HAProxy's line parser never interprets are written as they are;
// anything else is single-quoted (no escapes, no environment variables, no comments
// inside), with each single quote written as '\”. Control characters cannot be
// written in any form and are refused.
func QuoteConfigWord(s string) (string, error) {
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
	return QuoteConfigWord(strings.ReplaceAll(s, "%", "%%"))
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

// ConfigWords splits one haproxy.cfg line into words the way HAProxy's line parser
// does: blanks separate words; single quotes keep everything up to the next single
// quote; double quotes keep blanks and '#' but still honour backslash escapes and
// environment variables; a backslash outside single quotes escapes the next
// character (\xHH is a byte); an unquoted '#' ends the line. Environment variables
// are kept as written ("$NAME"). It returns an error for an unterminated quote.
func ConfigWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\\' && i+1 < len(line):
			inWord = true
			i++
			switch e := line[i]; e {
			case 'x':
				if i+2 < len(line) {
					var b byte
					if _, err := fmt.Sscanf(line[i+1:i+3], "%02x", &b); err == nil {
						cur.WriteByte(b)
						i += 2
						continue
					}
				}
				cur.WriteString(`\x`)
			case 'n':
				cur.WriteByte('\n')
			case 'r':
				cur.WriteByte('\r')
			case 't':
				cur.WriteByte('\t')
			default:
				cur.WriteByte(e)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#':
			if inWord {
				words = append(words, cur.String())
			}
			return words, nil
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
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
func Check(kind Kind, content string) error {
	switch kind {
	case KindConfig:
		return CheckConfig(content)
	case KindMap:
		return CheckMapFile(content)
	case KindCrtList:
		return CheckCrtList(content)
	}
	return nil
}

// CheckConfig accepts a rendered haproxy.cfg whose lines HAProxy reads whole: no
// control characters besides tabs, every quote closed, at most MaxConfigWords words.
func CheckConfig(content string) error {
	for n, line := range strings.Split(content, "\n") {
		for i := 0; i < len(line); i++ {
			if c := line[i]; (c < 0x20 && c != '\t') || c == 0x7f {
				return lineErr(n, "%s", describeControl(c))
			}
		}
		words, err := ConfigWords(line)
		if err != nil {
			return &LineError{Line: n + 1, Err: err}
		}
		if len(words) > MaxConfigWords {
			return lineErr(n, "%d words, HAProxy reads at most %d per line: %.60q", len(words), MaxConfigWords, strings.TrimSpace(line))
		}
	}
	return nil
}
