package config

import (
	"fmt"
	"strings"
)

// Config is a parsed haproxy.cfg: its sections in file order.
type Config struct {
	Sections []*Section
	shifts   []lineShift // how sections moved since their parse (lines.go)
	defaults []int       // the indexes of the defaults sections (Defaults)
}

// Section is one configuration section. Keyword is "global", "defaults", "backend",
// …; Name is the first header argument ("" for global or an anonymous defaults).
// A section with an empty Keyword holds the preprocessor lines (".if", ".notice", …)
// that come before the first section.
type Section struct {
	Keyword    string
	Name       string
	Args       []string // header arguments after the keyword, Name included
	Line       int      // in the parse that made it: Config.SectionLine is where it is
	Directives []Directive
}

// Directive is one configuration line: its keyword, its decoded arguments and the
// 1-based line it came from (in the parse that made it: Config.DirectiveLine is
// where it is).
type Directive struct {
	Keyword string
	Args    []string
	Line    int
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

// Defaults are the indexes of c's defaults sections, in order: what a proxy
// inherits is found without a pass over every section (50,000 backends).
func (c *Config) Defaults() []int { return c.defaults }

// IsProxy reports whether the section is a proxy that can hold servers.
func (s *Section) IsProxy() bool { return IsProxyKeyword(s.Keyword) }

// Parse reads haproxy.cfg into sections and directives. Each line is one directive
// (HAProxy has no line continuation), split into words by Words; a line whose first
// word is a section keyword (IsSectionKeyword) starts a section, wherever it is
// indented, as in HAProxy. Environment variables are not expanded: the text is
// compared as written.
func Parse(text string) (*Config, error) {
	cfg := &Config{}
	var cur *Section
	for i, raw := range strings.Split(text, "\n") {
		lineNo := i + 1
		words, err := Words(strings.TrimSuffix(raw, "\r"))
		if err != nil {
			return nil, fmt.Errorf("parse haproxy.cfg line %d: %w", lineNo, err)
		}
		if len(words) == 0 {
			continue
		}
		if IsSectionKeyword(words[0]) {
			cur = &Section{Keyword: words[0], Args: words[1:], Line: lineNo}
			if len(words) > 1 {
				cur.Name = words[1]
			}
			if cur.Keyword == "defaults" {
				cfg.defaults = append(cfg.defaults, len(cfg.Sections))
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

// String writes the configuration back in a canonical form that Parse reads into
// the same sections and directives (comments and layout are not kept).
func (c *Config) String() string {
	var b strings.Builder
	for _, s := range c.Sections {
		if s.Keyword != "" {
			b.WriteString(JoinWords(append([]string{s.Keyword}, s.Args...)))
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
	return JoinWords(append([]string{d.Keyword}, d.Args...))
}
