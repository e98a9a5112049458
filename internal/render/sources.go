package render

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
)

// source is one template as the compiler sees it.
type source struct {
	path    string // path in the compiler's file system
	display string // how errors name it: "haproxy.cfg", "snippet backends", "map host.map"
	text    string // original text, for error excerpts
}

// Paths in the compiler's file system. Every template gets an extension because
// Scriggo mis-handles extension-less render paths.
// snippetPath is relative to the file system root; includes reference it with a
// leading slash so that they resolve the same from every directory.
func snippetPath(name string) string { return "snippets/" + name + ".tpl" }
func mainPath(kind, name string) string {
	return kind + "/" + name + ".tpl"
}

var (
	globPattern    = regexp.MustCompile(`\{\{-?\s*render_glob\s*\(?\s*"([^"]*)"\s*\)?\s*-?\}\}`)
	renderAction   = regexp.MustCompile(`\{\{-?\s*render\s+"([^"]+)"\s*-?\}\}`)
	includePattern = regexp.MustCompile(`\b(render|import)(\s+)"([^"/][^"]*)"`)
)

type snippetInfo struct {
	name     string
	priority int32
}

// sortedSnippets orders snippets by priority, then name: the order of render_glob.
func sortedSnippets(snippets map[string]v1alpha1.TemplateSnippet) []snippetInfo {
	out := make([]snippetInfo, 0, len(snippets))
	for name, s := range snippets {
		p := int32(v1alpha1.DefaultSnippetPriority)
		if s.Priority != nil {
			p = *s.Priority
		}
		out = append(out, snippetInfo{name, p})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].priority != out[j].priority {
			return out[i].priority < out[j].priority
		}
		return out[i].name < out[j].name
	})
	return out
}

// matchSnippets returns the snippets whose name matches a shell pattern, in glob order.
func matchSnippets(ordered []snippetInfo, pattern string) ([]string, error) {
	var out []string
	for _, s := range ordered {
		ok, err := path.Match(pattern, s.name)
		if err != nil {
			return nil, fmt.Errorf("render_glob pattern %q: %w", pattern, err)
		}
		if ok {
			out = append(out, s.name)
		}
	}
	return out, nil
}

// preprocess rewrites a template's text for the compiler: render_glob is expanded into
// one render per matching snippet, include paths point at snippet files, and with
// profiling every render is bracketed by trace calls. Newlines are preserved so that
// error positions keep pointing at the author's lines.
func preprocess(text string, ordered []snippetInfo, known map[string]bool, profile bool) (string, error) {
	var globErr error
	text = globPattern.ReplaceAllStringFunc(text, func(m string) string {
		pattern := globPattern.FindStringSubmatch(m)[1]
		names, err := matchSnippets(ordered, pattern)
		if err != nil {
			globErr = err
			return m
		}
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, `{{ render %q }}`, n)
		}
		return b.String()
	})
	if globErr != nil {
		return "", globErr
	}
	if profile {
		text = renderAction.ReplaceAllStringFunc(text, func(m string) string {
			name := renderAction.FindStringSubmatch(m)[1]
			return fmt.Sprintf(`{{ %s.Enter(%q) }}%s{{ %s.Exit() }}`, traceVar, name, m, traceVar)
		})
	}
	text = includePattern.ReplaceAllStringFunc(text, func(m string) string {
		sub := includePattern.FindStringSubmatch(m)
		if !known[sub[3]] {
			return m
		}
		return sub[1] + sub[2] + `"/` + snippetPath(sub[3]) + `"`
	})
	return text, nil
}
