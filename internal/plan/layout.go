package plan

import "github.com/haproxy-haptic/haptic/internal/haproxy/config"

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
	for _, p := range c.list {
		if p.cfg == cfg && p.layout != nil {
			c.mu.Unlock()
			return p.layout
		}
	}
	c.mu.Unlock()
	l := newLayout(cfg) // (outside the lock: other pods' plans go on)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.list {
		if c.list[i].cfg == cfg {
			if c.list[i].layout == nil {
				c.list[i].layout = l
				c.keepLayouts(i)
			}
			return c.list[i].layout
		}
	}
	return l
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
