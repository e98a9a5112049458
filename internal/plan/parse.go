package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Config is a parsed haproxy.cfg: its sections in file order.
type Config struct {
	Sections []*Section
}

// Section is one configuration section. Keyword is "global", "defaults", "backend",
// …; Name is the first header argument ("" for global or an anonymous defaults).
// A section with an empty Keyword holds the preprocessor lines (".if", ".notice", …)
// that come before the first section.
type Section struct {
	Keyword    string
	Name       string
	Args       []string // header arguments after the keyword, Name included
	Line       int
	Directives []Directive
}

// Directive is one configuration line: its keyword, its decoded arguments and the
// 1-based line it came from.
type Directive struct {
	Keyword string
	Args    []string
	Line    int
}

// sectionKeywords start a section when they are the first word of a line.
var sectionKeywords = map[string]bool{
	"global": true, "defaults": true, "frontend": true, "backend": true, "listen": true,
	"userlist": true, "peers": true, "resolvers": true, "http-errors": true, "ring": true,
	"cache": true, "program": true, "mailers": true, "fcgi-app": true, "log-forward": true,
	"crt-store": true, "traces": true, "acme": true,
}

// Title is how reasons name a section: "backend be_a", "global", "defaults".
func (s *Section) Title() string {
	if s.Keyword == "" {
		return "(top level)"
	}
	if s.Name == "" {
		return s.Keyword
	}
	return s.Keyword + " " + s.Name
}

// IsProxy reports whether the section is a proxy that can hold servers.
func (s *Section) IsProxy() bool { return s.Keyword == "backend" || s.Keyword == "listen" }

// Parse reads haproxy.cfg. Each line is one directive (HAProxy has no line
// continuation); '#' outside quotes starts a comment; arguments are split on blanks
// and tabs, with "…" (backslash escapes), '…' (literal) and backslash escapes outside
// quotes. Environment variables are not expanded: the text is compared as written.
func Parse(text string) (*Config, error) {
	cfg := &Config{}
	var cur *Section
	for i, raw := range strings.Split(text, "\n") {
		lineNo := i + 1
		words, err := splitLine(strings.TrimSuffix(raw, "\r"))
		if err != nil {
			return nil, fmt.Errorf("parse haproxy.cfg line %d: %w", lineNo, err)
		}
		if len(words) == 0 {
			continue
		}
		if sectionKeywords[words[0]] {
			cur = &Section{Keyword: words[0], Args: words[1:], Line: lineNo}
			if len(words) > 1 {
				cur.Name = words[1]
			}
			cfg.Sections = append(cfg.Sections, cur)
			continue
		}
		d := Directive{Keyword: words[0], Args: words[1:], Line: lineNo}
		if cur == nil {
			// Only preprocessor lines may come before the first section.
			if !strings.HasPrefix(d.Keyword, ".") {
				return nil, fmt.Errorf("parse haproxy.cfg line %d: %q outside of any section", lineNo, d.Keyword)
			}
			cur = &Section{Line: lineNo}
			cfg.Sections = append(cfg.Sections, cur)
		}
		cur.Directives = append(cur.Directives, d)
	}
	return cfg, nil
}

// splitLine splits one line into decoded words, dropping a trailing comment.
func splitLine(line string) ([]string, error) {
	if !strings.ContainsAny(line, "\"'\\") {
		return splitPlain(line), nil
	}
	var words []string
	var word strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#':
			flush()
			return words, nil
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated single quote at column %d", i+1)
			}
			word.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case c == '"':
			n, err := readDoubleQuoted(line[i+1:], &word)
			if err != nil {
				return nil, fmt.Errorf("%w at column %d", err, i+1)
			}
			inWord = true
			i += n
		case c == '\\':
			n, err := readEscape(line[i+1:], &word)
			if err != nil {
				return nil, fmt.Errorf("%w at column %d", err, i+1)
			}
			inWord = true
			i += n
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, nil
}

// splitPlain splits a line without quotes or escapes, the common case, without
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

// readDoubleQuoted decodes s up to its closing quote and returns how many bytes it
// consumed, the quote included.
func readDoubleQuoted(s string, out *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			return i + 1, nil
		case '\\':
			n, err := readEscape(s[i+1:], out)
			if err != nil {
				return 0, err
			}
			i += n
		default:
			out.WriteByte(s[i])
		}
	}
	return 0, fmt.Errorf("unterminated double quote")
}

// readEscape decodes the escape after a backslash and returns how many bytes of s
// it used: \r \n \t \xHH, and any other character stands for itself.
func readEscape(s string, out *strings.Builder) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("backslash at end of line")
	}
	switch s[0] {
	case 'r':
		out.WriteByte('\r')
	case 'n':
		out.WriteByte('\n')
	case 't':
		out.WriteByte('\t')
	case 'x':
		if len(s) < 3 {
			return 0, fmt.Errorf("incomplete \\x escape")
		}
		v, err := strconv.ParseUint(s[1:3], 16, 8)
		if err != nil {
			return 0, fmt.Errorf("invalid \\x escape %q", s[:3])
		}
		out.WriteByte(byte(v))
		return 3, nil
	default:
		out.WriteByte(s[0])
	}
	return 1, nil
}

// String writes the configuration back in a canonical form that Parse reads into
// the same sections and directives (comments and layout are not kept).
func (c *Config) String() string {
	var b strings.Builder
	for _, s := range c.Sections {
		if s.Keyword != "" {
			b.WriteString(joinWords(append([]string{s.Keyword}, s.Args...)))
			b.WriteByte('\n')
		}
		for _, d := range s.Directives {
			b.WriteString("    ")
			b.WriteString(d.String())
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// String is the directive as one canonical line.
func (d Directive) String() string {
	return joinWords(append([]string{d.Keyword}, d.Args...))
}

func joinWords(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = quoteWord(w)
	}
	return strings.Join(quoted, " ")
}

// quoteWord leaves plain words alone and double-quotes the others so that
// splitLine decodes them back to w.
func quoteWord(w string) string {
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
