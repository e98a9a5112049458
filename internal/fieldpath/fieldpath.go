package fieldpath

import (
	"fmt"
	"strconv"
	"strings"
)

// Step is one element of a path: a map key or a list index.
type Step struct {
	Key   string
	Index int
	IsKey bool
}

// Path is a parsed field path.
type Path struct {
	Source string
	Steps  []Step
}

// Parse parses a field path.
func Parse(s string) (Path, error) {
	src := s
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}"), "$")
	var steps []Step
	for i := 0; i < len(s); {
		switch s[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return Path{}, fmt.Errorf("path %q: unclosed '['", src)
			}
			inner := strings.TrimSpace(s[i+1 : i+end])
			i += end + 1
			if len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0] {
				steps = append(steps, Step{Key: inner[1 : len(inner)-1], IsKey: true})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return Path{}, fmt.Errorf("path %q: %q is neither a quoted key nor a list index", src, inner)
			}
			steps = append(steps, Step{Index: n})
		default:
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			steps = append(steps, Step{Key: s[i:j], IsKey: true})
			i = j
		}
	}
	if len(steps) == 0 {
		return Path{}, fmt.Errorf("path %q is empty", src)
	}
	return Path{Source: src, Steps: steps}, nil
}

// MustParse parses a path known to be valid.
func MustParse(s string) Path {
	p, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return p
}

// Get returns the value at the path, and whether it exists.
func (p Path) Get(obj any) (any, bool) {
	cur := obj
	for _, st := range p.Steps {
		switch c := cur.(type) {
		case map[string]any:
			if !st.IsKey {
				return nil, false
			}
			v, ok := c[st.Key]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			if st.IsKey || st.Index >= len(c) {
				return nil, false
			}
			cur = c[st.Index]
		default:
			return nil, false
		}
	}
	return cur, true
}

// GetString returns the value at the path formatted as a string ("" when absent).
func (p Path) GetString(obj any) string {
	v, ok := p.Get(obj)
	if !ok || v == nil {
		return ""
	}
	return Format(v)
}

// Format renders a JSON scalar the way selectors compare it.
func Format(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case bool:
		return strconv.FormatBool(x)
	default:
		return fmt.Sprint(x)
	}
}

// Delete removes the value at the path in place. A missing path is not an error and
// writes nothing: objects shared with an informer's cache, already stripped, must
// not be written to concurrently with the cache's readers.
func (p Path) Delete(obj any) {
	if len(p.Steps) == 0 {
		return
	}
	parent := obj
	for _, st := range p.Steps[:len(p.Steps)-1] {
		next, ok := Path{Steps: []Step{st}}.Get(parent)
		if !ok {
			return
		}
		parent = next
	}
	last := p.Steps[len(p.Steps)-1]
	if m, ok := parent.(map[string]any); ok && last.IsKey {
		if _, present := m[last.Key]; present {
			delete(m, last.Key)
		}
	}
}

// Selector is a client-side equality filter: path=value.
type Selector struct {
	Path  Path
	Value string
}

// ParseSelector parses "path=value"; an empty string gives a nil selector.
func ParseSelector(s string) (*Selector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	path, value, ok := strings.Cut(s, "=")
	if !ok {
		return nil, fmt.Errorf("field selector %q: want path=value", s)
	}
	p, err := Parse(strings.TrimSuffix(path, "="))
	if err != nil {
		return nil, fmt.Errorf("field selector: %w", err)
	}
	return &Selector{Path: p, Value: strings.TrimPrefix(value, "=")}, nil
}

// Matches reports whether obj passes the selector; a nil selector passes everything.
func (s *Selector) Matches(obj any) bool {
	return s == nil || s.Path.GetString(obj) == s.Value
}

// The object identity paths, parsed once: they are read for every watched object.
var (
	Namespace = MustParse("metadata.namespace")
	Name      = MustParse("metadata.name")
)

// ObjectKey is namespace/name of a decoded object (name alone when cluster-scoped).
func ObjectKey(obj map[string]any) string {
	ns, name := Namespace.GetString(obj), Name.GetString(obj)
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// Without returns obj without the value at the path, leaving obj untouched: the
// maps and lists along the path are copied, everything else is shared. obj itself
// is returned when the path is absent. For objects shared with an informer's cache.
func (p Path) Without(obj map[string]any) map[string]any {
	if len(p.Steps) == 0 || !p.Steps[0].IsKey {
		return obj
	}
	if _, ok := p.Get(obj); !ok {
		return obj
	}
	out, _ := without(obj, p.Steps).(map[string]any)
	return out
}

// without copies cur along steps and deletes the last one; the path exists.
func without(cur any, steps []Step) any {
	st := steps[0]
	switch c := cur.(type) {
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, v := range c {
			out[k] = v
		}
		if len(steps) == 1 {
			delete(out, st.Key)
		} else {
			out[st.Key] = without(c[st.Key], steps[1:])
		}
		return out
	case []any:
		out := append([]any(nil), c...)
		if len(steps) > 1 {
			out[st.Index] = without(c[st.Index], steps[1:])
		}
		return out
	}
	return cur
}
