package config

import (
	"fmt"
	"strings"
)

// MaxLineWords is HAProxy's limit on the words of one configuration line
// (MAX_LINE_ARGS): later words are dropped with only a warning.
const MaxLineWords = 64

// Words splits one haproxy.cfg line into words the way HAProxy's line parser
// (parse_line) does:
//
//   - spaces and tabs separate words; an unquoted '#' ends the line, even inside a
//     word;
//   - single quotes keep everything up to the next single quote, backslashes
//     included;
//   - double quotes keep blanks and '#'; backslash escapes still apply inside;
//   - outside single quotes a backslash escapes a blank, '\', '#', '\” and '"'
//     (which stand for themselves), "$" inside double quotes, and writes \t \n \r
//     and \xHH (two hex digits, else an error); before any other character the
//     backslash is kept ("\1" stays "\1", as regex back-references need);
//   - environment variables are kept as written ("$NAME"), not expanded.
//
// It returns an error for an unterminated quote or a bad \x escape, naming the
// column.
func Words(line string) ([]string, error) {
	if !strings.ContainsAny(line, "\"'\\") {
		return splitPlain(line), nil
	}
	var words []string
	var word strings.Builder
	inWord := false
	quote, quoteAt := byte(0), 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				word.WriteByte(c)
			}
		case c == '\\':
			n, err := unescape(line[i+1:], quote == '"', &word)
			if err != nil {
				return nil, fmt.Errorf("%w at column %d", err, i+1)
			}
			inWord = true
			i += n
		case c == '"':
			if quote == '"' {
				quote = 0
			} else {
				quote, quoteAt, inWord = '"', i, true
			}
		case quote == '"':
			word.WriteByte(c)
		case c == '\'':
			quote, quoteAt, inWord = '\'', i, true
		case c == ' ' || c == '\t' || c == '#':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
			if c == '#' {
				return words, nil
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	switch quote {
	case '\'':
		return nil, fmt.Errorf("unterminated single quote at column %d", quoteAt+1)
	case '"':
		return nil, fmt.Errorf("unterminated double quote at column %d", quoteAt+1)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// splitPlain splits a line without quotes or backslashes, the common case, without
// copying its words.
func splitPlain(line string) []string {
	words := make([]string, 0, 4)
	start := -1
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ', '\t', '#':
			if start >= 0 {
				words = append(words, line[start:i])
				start = -1
			}
			if line[i] == '#' {
				return words
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		words = append(words, line[start:])
	}
	return words
}

// unescape writes what the backslash before s stands for and returns how many bytes
// of s it used.
func unescape(s string, inDoubleQuotes bool, out *strings.Builder) (int, error) {
	if s == "" {
		out.WriteByte('\\')
		return 0, nil
	}
	switch c := s[0]; c {
	case ' ', '\\', '#', '\'', '"':
		out.WriteByte(c)
	case '$':
		if !inDoubleQuotes {
			out.WriteByte('\\')
			return 0, nil
		}
		out.WriteByte(c)
	case 't':
		out.WriteByte('\t')
	case 'n':
		out.WriteByte('\n')
	case 'r':
		out.WriteByte('\r')
	case 'x':
		if len(s) < 3 || !isHex(s[1]) || !isHex(s[2]) {
			return 0, fmt.Errorf("invalid or incomplete escape %q", "\\"+s[:min(3, len(s))])
		}
		out.WriteByte(hexValue(s[1])<<4 | hexValue(s[2]))
		return 3, nil
	default:
		out.WriteByte('\\') // not an escape sequence: the backslash stays
		return 0, nil
	}
	return 1, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexValue(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// JoinWords writes words as one line in the canonical form Directive.String uses:
// Words reads it back into the same words.
func JoinWords(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = canonicalWord(w)
	}
	return strings.Join(quoted, " ")
}

// canonicalWord leaves plain words alone and double-quotes the others so that Words
// decodes them back to w. It is for display and comparison (plan reasons); the
// renderer's writer is QuoteWord.
func canonicalWord(w string) string {
	plain := w != ""
	for i := 0; i < len(w) && plain; i++ {
		c := w[i]
		plain = c > ' ' && c < 0x7f && c != '"' && c != '\'' && c != '\\' && c != '#'
	}
	if plain {
		return w
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c >= 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
