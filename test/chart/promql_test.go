package chart

import (
	"sort"
	"strings"
	"unicode"
)

// promqlKeywords are identifiers of PromQL's grammar that are not metric names.
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "by": true, "without": true, "on": true,
	"ignoring": true, "group_left": true, "group_right": true, "bool": true, "offset": true,
	"inf": true, "nan": true, "atan2": true, "start": true, "end": true,
	// aggregation operators, which may be followed by "by (…)" before their "(".
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

// labelListKeywords are followed by a parenthesised list of label names.
var labelListKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// metricNames returns the metric names a PromQL expression selects, sorted: the
// identifiers that are not functions, aggregations, keywords or label names, outside
// strings, label matchers ({…}), ranges ([…]) and label lists (by (…)).
func metricNames(expr string) []string {
	seen := map[string]bool{}
	s := []rune(expr)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			i = skipString(s, i)
		case c == '{':
			i = skipTo(s, i, '}')
		case c == '[':
			i = skipTo(s, i, ']')
		case c == '$': // a Grafana variable, e.g. $__rate_interval
			i++
			for i < len(s) && isIdent(s[i]) {
				i++
			}
		case unicode.IsDigit(c) || c == '.' && i+1 < len(s) && unicode.IsDigit(s[i+1]):
			for i < len(s) && (isIdent(s[i]) || s[i] == '.') {
				i++
			}
		case isIdentStart(c):
			start := i
			for i < len(s) && isIdent(s[i]) {
				i++
			}
			word := string(s[start:i])
			j := i
			for j < len(s) && unicode.IsSpace(s[j]) {
				j++
			}
			paren := j < len(s) && s[j] == '('
			switch {
			case labelListKeywords[word] && paren:
				i = skipTo(s, j, ')')
			case promqlKeywords[word], paren:
				// a keyword, or a function or aggregation call
			default:
				seen[word] = true
			}
		default:
			i++
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func isIdentStart(c rune) bool { return c == '_' || c == ':' || unicode.IsLetter(c) }
func isIdent(c rune) bool      { return isIdentStart(c) || unicode.IsDigit(c) }

// skipString returns the index after the string literal starting at i.
func skipString(s []rune, i int) int {
	q := s[i]
	for i++; i < len(s); i++ {
		if s[i] == '\\' && q != '`' {
			i++
			continue
		}
		if s[i] == q {
			return i + 1
		}
	}
	return len(s)
}

// skipTo returns the index after the close that ends the group opened at i,
// skipping strings inside it.
func skipTo(s []rune, i int, close rune) int {
	open := s[i]
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"', '\'', '`':
			i = skipString(s, i) - 1
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// scrapedNames returns the sample names of a Prometheus text exposition.
func scrapedNames(body string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if end := strings.IndexAny(line, "{ "); end > 0 {
			names[line[:end]] = true
		}
	}
	return names
}
