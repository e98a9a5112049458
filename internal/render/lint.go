package render

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Lint reports template lines that print text from an object other than through a
// writer (writers.go): a show action that reads an object's field directly, and any
// show inside a '#' comment line that is not comment(...). Values computed in code
// blocks and printed later cannot be traced this way; the check of every rendered
// file (checkOutput) and the store's refusal of control characters cover those.
func (e *Engine) Lint() []string {
	var out []string
	paths := make([]string, 0, len(e.sources))
	for p := range e.sources {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		src := e.sources[p]
		for _, f := range lintText(src.text) {
			out = append(out, fmt.Sprintf("%s:%d: %s", src.display, f.line, f.message))
		}
	}
	return out
}

type lintFinding struct {
	line    int
	message string
}

// writerCalls are the show actions that may print object text: the writers, and
// helpers whose output is a number, JSON or a template's own text.
var writerCalls = []string{"cfg_word(", "lf_word(", "map_key(", "map_value(", "fetch_arg(", "comment(",
	"toint(", "toJSON(", "render ", "render_glob", "fail(", "pathResolver.", "fileRegistry.Register("}

// objectField matches an expression that reads a watched object's field: typed
// (ing.Spec.Rules) or untyped (ing["spec"]).
var objectField = regexp.MustCompile(`\.(Metadata|Spec|Status|Data|StringData|Endpoints|Addresses|Ports|Annotations|Labels)\b|\[\s*"(metadata|spec|status|data|annotations)"\s*\]`)

var literal = regexp.MustCompile(`^("[^"]*"|` + "`[^`]*`" + `|[0-9]+)$`)

func lintText(text string) []lintFinding {
	var out []lintFinding
	open := ""
	for n, line := range strings.Split(text, "\n") {
		rest, lineStart := line, open == ""
		before := ""
		for len(rest) > 0 {
			if open != "" {
				j := strings.Index(rest, open)
				if j < 0 {
					rest = ""
					break
				}
				rest, open = rest[j+len(open):], ""
				continue
			}
			j := strings.Index(rest, "{")
			if j < 0 || j+1 >= len(rest) {
				before += rest
				break
			}
			before += rest[:j]
			switch {
			case strings.HasPrefix(rest[j:], "{%%"):
				open, rest = "%%}", rest[j+3:]
			case rest[j+1] == '%':
				open, rest = "%}", rest[j+2:]
			case rest[j+1] == '#':
				open, rest = "#}", rest[j+2:]
			case rest[j+1] == '{':
				end := strings.Index(rest[j+2:], "}}")
				if end < 0 {
					open, rest = "}}", rest[j+2:]
					continue
				}
				expr := strings.TrimSpace(rest[j+2 : j+2+end])
				if msg := lintShow(expr, lineStart && strings.HasPrefix(strings.TrimSpace(before), "#")); msg != "" {
					out = append(out, lintFinding{n + 1, msg})
				}
				rest = rest[j+2+end+2:]
			default:
				before += rest[j : j+1]
				rest = rest[j+1:]
			}
		}
	}
	return out
}

func lintShow(expr string, inComment bool) string {
	for _, w := range writerCalls {
		if strings.HasPrefix(expr, w) {
			return ""
		}
	}
	if literal.MatchString(expr) {
		return ""
	}
	if inComment {
		return fmt.Sprintf("{{ %s }} prints into a '#' comment: write comment(%s), which can never end the line", expr, expr)
	}
	if objectField.MatchString(expr) {
		return fmt.Sprintf("{{ %s }} prints an object's field as it is: use the writer of its context (cfg_word, lf_word, map_key, map_value, fetch_arg, comment)", expr)
	}
	return ""
}
