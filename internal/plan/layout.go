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
	byKey    *layered[string, *config.Section]
	inherit  *layered[*config.Section, string]
	named    map[string]*config.Section
	backends *layered[string, *config.Section]
	names    []string // the backends' names, sorted
}

func newLayout(c *config.Config) *layout {
	l := &layout{}
	keys, byKey := sectionKeys(c)
	backends := backendsByName(c)
	l.keys, l.byKey, l.backends = keys, rootLayer(byKey), rootLayer(backends)
	l.inherit = rootLayer(inheritedDefaults(c, l.keys))
	l.named = namedDefaults(c)
	l.names = sortedKeys(backends)
	return l
}

// layered is a map made from another by a few keys set or taken out, sharing it: a
// derived layout's maps (a copy of each was most of a plan's time at 50,000
// backends). Past maxLayers the layers are made one map again.
type layered[K comparable, V any] struct {
	parent *layered[K, V]
	set    map[K]V    // at the root every entry; above it the entries set
	gone   map[K]bool // (above the root) the keys taken out
	depth  int
}

const maxLayers = 8

func rootLayer[K comparable, V any](m map[K]V) *layered[K, V] { return &layered[K, V]{set: m} }

// get is the value of k, the zero value when k is not there.
func (m *layered[K, V]) get(k K) V {
	v, _ := m.lookup(k)
	return v
}

func (m *layered[K, V]) lookup(k K) (V, bool) {
	for l := m; l != nil; l = l.parent {
		if v, ok := l.set[k]; ok {
			return v, true
		}
		if l.gone[k] {
			break
		}
	}
	var zero V
	return zero, false
}

// edited is m with the keys of gone taken out, then those of set set.
func (m *layered[K, V]) edited(gone []K, set map[K]V) *layered[K, V] {
	out := &layered[K, V]{parent: m, set: set, gone: make(map[K]bool, len(gone)), depth: m.depth + 1}
	for _, k := range gone {
		if _, ok := set[k]; !ok {
			out.gone[k] = true
		}
	}
	if out.depth <= maxLayers {
		return out
	}
	var layers []*layered[K, V]
	for l := out; l.parent != nil; l = l.parent {
		layers = append(layers, l)
	}
	flat := maps.Clone(layers[len(layers)-1].parent.set)
	for i := len(layers) - 1; i >= 0; i-- {
		for k := range layers[i].gone {
			delete(flat, k)
		}
		maps.Copy(flat, layers[i].set)
	}
	return rootLayer(flat)
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
	var splices []config.Splice
	for _, p := range c.list {
		if p.cfg == cfg && p.layout != nil {
			c.mu.Unlock()
			return p.layout
		}
		if p.cfg == cfg && p.base != nil {
			from, splices = p.base, p.splices
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
		l, ok = base.derived(from, cfg, splices)
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

// derived is the layout of c, made from old (whose layout l is) by splices
// (config.Reparsed), without a pass over every section: false when a defaults
// section or a section whose keyword and name another has is in a splice (the keys
// and what proxies inherit then move).
func (l *layout) derived(old, c *config.Config, splices []config.Splice) (*layout, bool) {
	goneKeys := map[string]bool{}
	var gone, came []string // backend names
	var goneSections []*config.Section
	byKey, inherit, backends := map[string]*config.Section{}, map[*config.Section]string{}, map[string]*config.Section{}
	for _, sp := range splices { // (what every splice takes out first: a key may move from one to another)
		for i, s := range old.Sections[sp.At : sp.At+sp.Removed] {
			key := l.keys[sp.At+i]
			if s.Keyword == "defaults" || s.Keyword == "" ||
				!strings.HasSuffix(key, "\x000") || l.byKey.get(strings.TrimSuffix(key, "0")+"1") != nil {
				return nil, false // (one of several of its name)
			}
			goneKeys[key], goneSections = true, append(goneSections, s)
			if s.Keyword == "backend" && s.Name != "" {
				gone = append(gone, s.Name)
			}
		}
	}
	var keys []string // the new keys, in order
	at, shift := 0, 0 // l.keys copied up to at; splices before move c's indexes by shift
	for _, sp := range splices {
		added := c.Sections[sp.At+shift : sp.At+shift+sp.Added]
		keys = append(keys, l.keys[at:sp.At]...)
		for i, s := range added {
			key := s.Keyword + "\x00" + s.Name + "\x000"
			if s.Keyword == "defaults" || s.Keyword == "" || byKey[key] != nil || (!goneKeys[key] && l.byKey.get(key) != nil) {
				return nil, false
			}
			keys, byKey[key] = append(keys, key), s
			if config.InheritsDefaults(s.Keyword) {
				inherit[s] = inheritOf(c, l.keys, sp.At+shift+i)
			}
			if s.Keyword == "backend" && s.Name != "" {
				backends[s.Name] = s
				came = append(came, s.Name)
			}
		}
		at, shift = sp.At+sp.Removed, shift+sp.Added-sp.Removed
	}
	out := &layout{keys: append(keys, l.keys[at:]...),
		byKey: l.byKey.edited(slices.Collect(maps.Keys(goneKeys)), byKey), inherit: l.inherit.edited(goneSections, inherit),
		named: l.named, backends: l.backends.edited(gone, backends), names: l.names}
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
