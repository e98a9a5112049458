package validate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/fieldpath"
)

// JSONPath evaluates the assertion's path against the test's context document (or,
// when the target names a bundle file, that file parsed as JSON or YAML) and passes
// when the value's string form equals expected, ignoring surrounding whitespace.
// Several values (from [*] or a filter) are joined with spaces, as kubectl prints
// them; objects and lists compare as compact JSON with sorted keys.
func JSONPath(a v1alpha1.Assertion, b *bundle.Bundle, doc map[string]any) Result {
	target := displayTarget(a)
	r := newResult(a, target)
	path, err := parseJSONPath(a.JSONPath)
	if err != nil {
		r.fail("%v", err)
		return r
	}
	var root any = doc
	if target != contextTarget {
		text, ok := content(&r, Env{Bundle: b}, target)
		if !ok {
			return r
		}
		if root, err = parseDocument(text); err != nil {
			r.fail("%s is not JSON or YAML: %v", target, err)
			return r
		}
	}
	vals := path.eval(root)
	if len(vals) == 0 {
		r.fail("%s not found in %s%s", a.JSONPath, target, path.hint(root))
		return r
	}
	got := make([]string, len(vals))
	for i, v := range vals {
		got[i] = stringify(v)
	}
	if actual := strings.Join(got, " "); strings.TrimSpace(actual) != strings.TrimSpace(a.Expected) {
		r.fail("%s is %q, expected %q", a.JSONPath, actual, a.Expected)
	}
	return r
}

// parseDocument decodes JSON or YAML into plain maps and slices.
func parseDocument(text string) (any, error) {
	js, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return v, nil
}

// stringify is the string form compared with expected: scalars as selectors print
// them, objects and lists as compact JSON (map keys sorted).
func stringify(v any) string {
	switch v.(type) {
	case nil:
		return ""
	case map[string]any, []any:
		js, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(js)
	}
	return fieldpath.Format(v)
}

// jsonPath is kubectl-style JSONPath reduced to what assertions need: plain field
// paths (evaluated by fieldpath), wildcards [*] / .* and filters
// [?(@.field == "value")], [?(@.field != "value")] and [?(@.field)].
type jsonPath struct {
	source string
	segs   []jpSeg
}

type jpSeg struct {
	plain    *fieldpath.Path // a run of keys and indexes
	wildcard bool
	filter   *jpFilter
}

type jpFilter struct {
	path  fieldpath.Path
	op    string // "==", "!=" or "" (exists)
	value string
}

func parseJSONPath(src string) (jsonPath, error) {
	s := strings.TrimSpace(src)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	s = strings.TrimPrefix(strings.TrimSpace(s), "$")
	if strings.Trim(s, ".") == "" {
		return jsonPath{}, fmt.Errorf("jsonpath %q is empty", src)
	}
	p := jsonPath{source: src}
	flush := func(plain string) error {
		if strings.Trim(plain, ".") == "" {
			return nil
		}
		fp, err := fieldpath.Parse(plain)
		if err != nil {
			return fmt.Errorf("jsonpath %q: %w", src, err)
		}
		p.segs = append(p.segs, jpSeg{plain: &fp})
		return nil
	}
	for {
		i := indexSpecial(s)
		if i < 0 {
			return p, flush(s)
		}
		if err := flush(s[:i]); err != nil {
			return jsonPath{}, err
		}
		switch {
		case strings.HasPrefix(s[i:], "[*]"):
			p.segs = append(p.segs, jpSeg{wildcard: true})
			s = s[i+3:]
		case strings.HasPrefix(s[i:], ".*"):
			p.segs = append(p.segs, jpSeg{wildcard: true})
			s = s[i+2:]
		default: // "[?("
			end := strings.Index(s[i:], ")]")
			if end < 0 {
				return jsonPath{}, fmt.Errorf("jsonpath %q: unclosed filter", src)
			}
			f, err := parseFilter(s[i+3 : i+end])
			if err != nil {
				return jsonPath{}, fmt.Errorf("jsonpath %q: %w", src, err)
			}
			p.segs = append(p.segs, jpSeg{filter: &f})
			s = s[i+end+2:]
		}
	}
}

// indexSpecial finds the next wildcard or filter, skipping quoted keys.
func indexSpecial(s string) int {
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "['"), strings.HasPrefix(s[i:], `["`):
			end := strings.Index(s[i+2:], string(s[i+1])+"]")
			if end < 0 {
				return -1
			}
			i += end + 3
		case strings.HasPrefix(s[i:], "[*]"), strings.HasPrefix(s[i:], ".*"), strings.HasPrefix(s[i:], "[?("):
			return i
		}
	}
	return -1
}

func parseFilter(expr string) (jpFilter, error) {
	expr = strings.TrimSpace(expr)
	var f jpFilter
	lhs := expr
	for _, op := range []string{"==", "!="} {
		if l, r, ok := strings.Cut(expr, op); ok {
			lhs, f.op, f.value = l, op, unquote(strings.TrimSpace(r))
			break
		}
	}
	lhs = strings.TrimSpace(lhs)
	if strings.ContainsAny(lhs, "<>=!&|") || strings.Contains(f.value, "&&") || strings.Contains(f.value, "||") {
		return jpFilter{}, fmt.Errorf("filter %q: only @.field, @.field == value and @.field != value are supported", expr)
	}
	if !strings.HasPrefix(lhs, "@.") {
		return jpFilter{}, fmt.Errorf("filter %q: want @.field [== or != value]", expr)
	}
	fp, err := fieldpath.Parse(lhs[1:])
	if err != nil {
		return jpFilter{}, fmt.Errorf("filter %q: %w", expr, err)
	}
	f.path = fp
	return f, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

func (f jpFilter) match(v any) bool {
	got, ok := f.path.Get(v)
	switch f.op {
	case "":
		return ok
	case "==":
		return ok && stringify(got) == f.value
	default:
		return !ok || stringify(got) != f.value
	}
}

// eval returns every value the path selects.
func (p jsonPath) eval(root any) []any {
	cur := []any{root}
	for _, seg := range p.segs {
		var next []any
		for _, v := range cur {
			switch {
			case seg.plain != nil:
				if got, ok := seg.plain.Get(v); ok {
					next = append(next, got)
				}
			case seg.wildcard:
				next = append(next, children(v)...)
			default:
				for _, c := range children(v) {
					if seg.filter.match(c) {
						next = append(next, c)
					}
				}
			}
		}
		cur = next
	}
	return cur
}

// children are a list's elements or a map's values in key order.
func children(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case map[string]any:
		keys := sortedKeys(x)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = x[k]
		}
		return out
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// hint names the keys available where a plain path stops matching, to help fix typos.
func (p jsonPath) hint(root any) string {
	if len(p.segs) != 1 || p.segs[0].plain == nil {
		return ""
	}
	steps := p.segs[0].plain.Steps
	cur := root
	where := ""
	for _, st := range steps {
		next, ok := fieldpath.Path{Steps: []fieldpath.Step{st}}.Get(cur)
		if !ok {
			break
		}
		cur = next
		if st.IsKey {
			where += "." + st.Key
		} else {
			where += "[" + strconv.Itoa(st.Index) + "]"
		}
	}
	if where == "" {
		where = "the top level"
	}
	switch x := cur.(type) {
	case map[string]any:
		if len(x) == 0 {
			return fmt.Sprintf(" (%s is empty)", where)
		}
		return fmt.Sprintf(" (keys at %s: %s)", where, strings.Join(sortedKeys(x), ", "))
	case []any:
		return fmt.Sprintf(" (%s is a list of %d)", where, len(x))
	}
	return ""
}
