package plan

import (
	"maps"
	"slices"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// layout is what the planner reads of a configuration's sections besides their
// directives: each section's key, the defaults each proxy inherits, the named
// defaults and the backends by name. A layout is made once per parse (layoutOf):
// placement and the config diff both read it, and a configuration the pods run was
// the desired one of the plan before (building these maps for both sides, twice,
// was most of a plan at 5,000 backends).
type layout struct {
	keys     []string
	byKey    map[string]*config.Section
	inherit  map[*config.Section]string
	named    map[string]*config.Section
	backends map[string]*config.Section
	names    []string // the backends' names, sorted
}

func newLayout(c *config.Config) *layout {
	l := &layout{}
	l.keys, l.byKey = sectionKeys(c)
	l.inherit = inheritedDefaults(c, l.keys)
	l.named = namedDefaults(c)
	l.backends = backendsByName(c)
	l.names = sortedKeys(l.backends)
	return l
}

// layoutOf is c's layout, remembered with c's parse while parsedConfigs holds it
// (the latest layoutsKept of them: a plan reads the running configuration's and the
// desired one's, and each takes about 1 MB at 5,000 backends). The planner only
// reads it.
func layoutOf(c *config.Config) *layout {
	return parsedConfigs.layoutOf(c)
}

func (c *configParses) layoutOf(cfg *config.Config) *layout {
	c.mu.Lock()
	var base *layout
	var from *config.Config
	var splice config.Splice
	for _, p := range c.list {
		if p.cfg == cfg && p.layout != nil {
			c.mu.Unlock()
			return p.layout
		}
		if p.cfg == cfg && p.base != nil {
			from, splice = p.base, p.splice
		}
	}
	for _, p := range c.list {
		if from != nil && p.cfg == from {
			base = p.layout
		}
	}
	c.mu.Unlock()
	// (outside the lock: other pods' plans go on)
	l, ok := (*layout)(nil), false
	if base != nil {
		l, ok = base.derived(from, cfg, splice)
	}
	if !ok {
		l = newLayout(cfg)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.list {
		if c.list[i].cfg == cfg {
			if c.list[i].layout == nil {
				c.list[i].layout, c.list[i].base = l, nil
				c.keepLayouts(i)
			}
			return c.list[i].layout
		}
	}
	return l
}

// derived is the layout of c, made from old (whose layout l is) by splice
// (config.Reparsed), without a pass over every section: false when a defaults
// section or a section whose keyword and name another has is in the splice (the
// keys and what proxies inherit then move).
func (l *layout) derived(old, c *config.Config, splice config.Splice) (*layout, bool) {
	removed := old.Sections[splice.At : splice.At+splice.Removed]
	added := c.Sections[splice.At : splice.At+splice.Added]
	for _, s := range slices.Concat(removed, added) {
		if s.Keyword == "defaults" || s.Keyword == "" {
			return nil, false
		}
	}
	out := &layout{byKey: maps.Clone(l.byKey), inherit: maps.Clone(l.inherit), named: l.named,
		backends: maps.Clone(l.backends), names: l.names}
	var gone, came []string // backend names
	for i, s := range removed {
		key := l.keys[splice.At+i]
		if !strings.HasSuffix(key, "\x000") || l.byKey[strings.TrimSuffix(key, "0")+"1"] != nil {
			return nil, false // (one of several of its name)
		}
		delete(out.byKey, key)
		delete(out.inherit, s)
		if s.Keyword == "backend" && s.Name != "" {
			delete(out.backends, s.Name)
			gone = append(gone, s.Name)
		}
	}
	keys := make([]string, len(added))
	for i, s := range added {
		keys[i] = s.Keyword + "\x00" + s.Name + "\x000"
		if out.byKey[keys[i]] != nil {
			return nil, false
		}
		out.byKey[keys[i]] = s
		if config.InheritsDefaults(s.Keyword) {
			out.inherit[s] = inheritOf(c, l.keys, splice.At+i)
		}
		if s.Keyword == "backend" && s.Name != "" {
			out.backends[s.Name] = s
			came = append(came, s.Name)
		}
	}
	out.keys = slices.Concat(l.keys[:splice.At], keys, l.keys[splice.At+splice.Removed:])
	slices.Sort(gone)
	slices.Sort(came)
	if !slices.Equal(gone, came) { // (a section parsed again keeps its name)
		names := make([]string, 0, len(l.names)+len(came))
		for _, n := range l.names {
			if _, found := slices.BinarySearch(gone, n); !found {
				names = append(names, n)
			}
		}
		out.names = mergeSorted(names, came)
	}
	return out, true
}

// inheritOf is what section i of c inherits (see inheritedDefaults), the defaults
// sections before it keyed as in keys.
func inheritOf(c *config.Config, keys []string, i int) string {
	last, named := "", ""
	from := fromName(c.Sections[i])
	for _, d := range c.Defaults() {
		if d >= i {
			break
		}
		last = keys[d]
		if s := c.Sections[d]; from != "" && s.Name == from {
			named = keys[d]
		}
	}
	if from != "" {
		return named + "\x00from"
	}
	return last
}

// mergeSorted is sorted a and b in one sorted slice.
func mergeSorted(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] <= b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// layoutsKept bounds the layouts remembered.
const layoutsKept = 2

// keepLayouts forgets the layouts of the oldest parses but the one at i beyond
// layoutsKept.
func (c *configParses) keepLayouts(i int) {
	n := 0
	for j := len(c.list) - 1; j >= 0; j-- {
		if c.list[j].layout == nil {
			continue
		}
		if n++; n > layoutsKept && j != i {
			c.list[j].layout = nil
		}
	}
}
