package libraries

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/config"
)

// maxClosureLines bounds every function literal and macro of the libraries: a
// template that does more is split by concern into functions of its own (see the
// gateway library's util-gateway-* snippets), as Go code would be.
const maxClosureLines = 200

// TestLibraryClosuresAreSmall: no function literal or macro of a default library is
// longer than maxClosureLines lines.
func TestLibraryClosuresAreSmall(t *testing.T) {
	found, macros := 0, 0
	var longest closure
	for _, lib := range libraries {
		// Each library on its own: only base holds haproxy.cfg, so none is a valid
		// config alone; the templates are all that is read.
		merged, err := config.MergeFiles(lib)
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(merged)
		if err != nil {
			t.Fatal(err)
		}
		var cfg v1alpha1.HAProxyTemplateConfig
		if err := json.Unmarshal(data, &cfg); err != nil {
			t.Fatalf("%s: %v", lib, err)
		}
		for _, tmpl := range templatesOf(&cfg.Spec) {
			for _, c := range closures(tmpl.text) {
				found++
				if strings.Contains(c.head, "macro") {
					macros++
				}
				if c.lines > longest.lines {
					longest = c
				}
				if c.lines > maxClosureLines {
					t.Errorf("%s, %s line %d: %s is %d lines; split it by concern (at most %d)",
						lib, tmpl.name, c.line, c.head, c.lines, maxClosureLines)
				}
			}
		}
	}
	if found < 20 {
		t.Fatalf("found %d closures in the libraries: the scanner is broken", found)
	}
	t.Logf("%d closures (%d macros); the longest: %d lines, %s", found, macros, longest.lines, longest.head)
}

// The scanner measures a function literal from its line to its closing brace,
// skipping braces in strings, raw strings and comments, and a macro to its end.
func TestClosureScanner(t *testing.T) {
	body := strings.Repeat("  x = append(x, \"}\") /* } */\n", 200)
	tmpl := "{% var F = func(a map[string]any) []string {\n" + body + "  var g = func() { `}` }\n  return x\n} %}\n" +
		"{% macro M(s string) %}\n{% if s != \"\" %}{{ s }}{% end %}\n{% for _, c := range s %}{{ c }}{% end for %}\n{% end macro %}\n"
	got := closures(tmpl)
	want := []closure{
		{line: 1, lines: 204, head: "{% var F = func(a map[string]any) []string {"},
		{line: 202, lines: 1, head: "var g = func() { `}` }"},
		{line: 205, lines: 4, head: "{% macro M(s string) %}"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("closures:\n got  %v\n want %v", got, want)
	}
}

type namedTemplate struct{ name, text string }

func templatesOf(s *v1alpha1.HAProxyTemplateConfigSpec) []namedTemplate {
	out := []namedTemplate{{"haproxyConfig", s.HAProxyConfig.Template}}
	for n, sn := range s.TemplateSnippets {
		out = append(out, namedTemplate{"snippet " + n, sn.Template})
	}
	for kind, files := range map[string]map[string]v1alpha1.GeneratedFile{"map": s.Maps, "file": s.Files, "cert": s.SSLCertificates, "crtlist": s.CrtLists} {
		for n, f := range files {
			out = append(out, namedTemplate{kind + " " + n, f.Template})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

type closure struct {
	line, lines int    // first line (1-based) and length
	head        string // the first line, trimmed
}

var (
	funcLiteral = regexp.MustCompile(`\bfunc\s*\(`)
	macroStart  = regexp.MustCompile(`\{%-?\s*macro\b`)
	blockStart  = regexp.MustCompile(`^\{%-?\s*(if|for|switch|select|macro|raw|using)\b`)
	blockEnd    = regexp.MustCompile(`^\{%-?\s*end\b`)
)

// closures finds the function literals and macros of a template.
func closures(text string) []closure {
	var out []closure
	lineAt := func(i int) int { return strings.Count(text[:i], "\n") + 1 }
	headAt := func(i int) string {
		start := strings.LastIndex(text[:i], "\n") + 1
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text) - i
		}
		return strings.TrimSpace(text[start : i+end])
	}
	for _, m := range funcLiteral.FindAllStringIndex(text, -1) {
		open := bodyStart(text, m[1])
		if open < 0 {
			continue // a func type, not a literal
		}
		end := matchingBrace(text, open)
		out = append(out, closure{line: lineAt(m[0]), lines: lineAt(end) - lineAt(m[0]) + 1, head: headAt(m[0])})
	}
	for _, m := range macroStart.FindAllStringIndex(text, -1) {
		end := macroEnd(text, m[0])
		out = append(out, closure{line: lineAt(m[0]), lines: lineAt(end) - lineAt(m[0]) + 1, head: headAt(m[0])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}

// bodyStart returns the index of the '{' that opens the body of the function whose
// parameter list starts at i, or -1 when none follows on the signature.
func bodyStart(text string, i int) int {
	depth := 1
	for ; i < len(text) && depth > 0; i++ {
		switch text[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	for ; i < len(text); i++ {
		switch text[i] {
		case '{':
			return i
		case '\n', '%', '}', ',', ';':
			return -1
		}
	}
	return -1
}

// matchingBrace returns the index of the brace closing the one at open.
func matchingBrace(text string, open int) int {
	depth := 0
	for i := open; i < len(text); i++ {
		switch {
		case text[i] == '"' || text[i] == '\'':
			q := text[i]
			for i++; i < len(text) && text[i] != q; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case text[i] == '`':
			if j := strings.IndexByte(text[i+1:], '`'); j >= 0 {
				i += j + 1
			}
		case strings.HasPrefix(text[i:], "/*"):
			if j := strings.Index(text[i+2:], "*/"); j >= 0 {
				i += j + 3
			}
		case text[i] == '{':
			depth++
		case text[i] == '}':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(text) - 1
}

// macroEnd returns the index of the {% end %} that closes the macro at start.
func macroEnd(text string, start int) int {
	depth := 0
	for i := start; i < len(text); i++ {
		if !strings.HasPrefix(text[i:], "{%") {
			continue
		}
		switch {
		case blockStart.MatchString(text[i:]):
			depth++
		case blockEnd.MatchString(text[i:]):
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(text) - 1
}
