package plan

import (
	"slices"
	"strconv"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// sectionKey identifies a section across two configs: keyword, name and, for
// repeated ones such as anonymous defaults, the occurrence number.
func sectionKeys(c *config.Config) ([]string, map[string]*config.Section) {
	keys := make([]string, 0, len(c.Sections))
	byKey := make(map[string]*config.Section, len(c.Sections))
	seen := make(map[string]int, len(c.Sections))
	for _, s := range c.Sections {
		base := s.Keyword + "\x00" + s.Name
		n := seen[base]
		seen[base] = n + 1
		key := base + "\x00" + strconv.Itoa(n)
		keys = append(keys, key)
		byKey[key] = s
	}
	return keys, byKey
}

// inheritedDefaults maps each proxy section to the key of the defaults section it
// inherits from: the one named by "from", else the last defaults before it.
func inheritedDefaults(c *config.Config, keys []string) map[*config.Section]string {
	out := make(map[*config.Section]string)
	named := make(map[string]string)
	last := ""
	for i, s := range c.Sections {
		switch {
		case s.Keyword == "defaults":
			last = keys[i]
			if s.Name != "" {
				named[s.Name] = keys[i]
			}
		case config.InheritsDefaults(s.Keyword):
			out[s] = last
			if from := fromName(s); from != "" {
				out[s] = named[from] + "\x00from"
			}
		}
	}
	return out
}

// defaultsChain returns the defaults sections a proxy inherits from, nearest first:
// the one its key names, then those each names with "from" (bounded against loops).
func defaultsChain(named map[string]*config.Section, byKey *layered[string, *config.Section], key string) []*config.Section {
	return defaultsFrom(named, byKey.get(strings.TrimSuffix(key, "\x00from")))
}

// defaultsFrom is defaults section d, then those each names with "from".
func defaultsFrom(named map[string]*config.Section, d *config.Section) []*config.Section {
	if d == nil {
		return nil
	}
	chain := []*config.Section{d}
	for len(chain) < 10 {
		parent := fromName(chain[len(chain)-1])
		if named[parent] == nil {
			break
		}
		chain = append(chain, named[parent])
	}
	return chain
}

// namedDefaults maps defaults names to their sections (the last one of a name wins).
func namedDefaults(c *config.Config) map[string]*config.Section {
	named := make(map[string]*config.Section)
	for _, i := range c.Defaults() {
		if s := c.Sections[i]; s.Name != "" {
			named[s.Name] = s
		}
	}
	return named
}

// fromName is the X of a "… from X" section header, or "".
func fromName(s *config.Section) string {
	for j := 1; j+1 < len(s.Args); j++ {
		if s.Args[j] == "from" {
			return s.Args[j+1]
		}
	}
	return ""
}

// diffConfig compares two parsed configs section by section. Server-only changes
// in a backend become runtime operations; every other difference is a reason.
func (p *planner) diffConfig(run, want *config.Config) {
	if e := p.edit; e != nil && e.run == run && e.want == want { // (every other section is the same)
		oldSec, newSec := run.Sections[e.at], want.Sections[e.at]
		if !sameDirectives(oldSec.Directives, newSec.Directives) {
			p.diffSection(oldSec, newSec, false, func() []*config.Section { return defaultsOf(want, e.at) })
		}
		return
	}
	rl, wl := layoutOf(run), layoutOf(want)
	if derivedParses && p.diffInOrder(run, want, rl, wl) {
		return
	}
	for _, k := range rl.keys {
		if wl.byKey.get(k) == nil {
			p.sectionAddedOrRemoved(rl.byKey.get(k), "removed")
		}
	}
	for _, k := range wl.keys {
		p.diffKeyed(rl, wl, k)
	}
}

// diffKeyed compares the section of key k on both sides, or reports it added.
func (p *planner) diffKeyed(rl, wl *layout, k string) {
	newSec := wl.byKey.get(k)
	oldSec := rl.byKey.get(k)
	if oldSec == nil {
		p.sectionAddedOrRemoved(newSec, "added")
		return
	}
	if slices.Equal(oldSec.Args, newSec.Args) && sameDirectives(oldSec.Directives, newSec.Directives) &&
		rl.inherit.get(oldSec) == wl.inherit.get(newSec) {
		return // the common case on large configs
	}
	_, isProxy := wl.inherit.lookup(newSec)
	p.diffSection(oldSec, newSec, isProxy && rl.inherit.get(oldSec) != wl.inherit.get(newSec), func() []*config.Section {
		return defaultsChain(wl.named, wl.byKey, wl.inherit.get(newSec))
	})
}

// diffInOrder is diffConfig walking both configurations in step: a section both
// share (a derived parse shares what did not change) is compared by its pointer
// alone where the defaults before it are those it had; a section added, taken out
// or found elsewhere (a pool slot's name now where the backend it takes goes) is
// compared by its key. A change of a route compared 100,000 keys and their sections
// at 50,000 backends. false (nothing reported) when the walk loses its way.
func (p *planner) diffInOrder(run, want *config.Config, rl, wl *layout) bool {
	// The defaults sections the same ones at the same places: past the first
	// section added or taken out after the last of them, what a shared section
	// inherits is what it inherited.
	settled := slices.Equal(run.Defaults(), want.Defaults())
	for _, i := range run.Defaults() {
		settled = settled && run.Sections[i] == want.Sections[i]
	}
	lastDefaults := -1
	if d := run.Defaults(); len(d) > 0 {
		lastDefaults = d[len(d)-1]
	}
	var removed []*config.Section
	var inOrder []string // want's keys, in order, whose sections are compared
	moved := map[string]bool{}
	i, j := 0, 0
	for j < len(wl.keys) {
		k := wl.keys[j]
		switch {
		case i < len(rl.keys) && moved[rl.keys[i]]:
			i++ // (compared where want has it)
		case i < len(rl.keys) && rl.keys[i] == k:
			if run.Sections[i] != want.Sections[j] || !settled || (i != j && min(i, j) <= lastDefaults) {
				inOrder = append(inOrder, k)
			}
			i, j = i+1, j+1
		case i < len(rl.keys) && wl.byKey.get(rl.keys[i]) == nil:
			removed, i = append(removed, run.Sections[i]), i+1
		case rl.byKey.get(k) == nil:
			inOrder, j = append(inOrder, k), j+1 // (added)
		default: // elsewhere in run (a pool slot's name where the backend it takes goes)
			inOrder, moved[k], j = append(inOrder, k), true, j+1
		}
	}
	for ; i < len(rl.keys); i++ {
		switch {
		case moved[rl.keys[i]]:
		case wl.byKey.get(rl.keys[i]) != nil:
			return false
		default:
			removed = append(removed, run.Sections[i])
		}
	}
	for _, s := range removed {
		p.sectionAddedOrRemoved(s, "removed")
	}
	for _, k := range inOrder {
		p.diffKeyed(rl, wl, k)
	}
	return true
}

// diffSection compares a section on both sides (the same key); otherDefaults says
// that a proxy inherits from a different defaults section, defaults gives the ones
// the desired side inherits, nearest first.
func (p *planner) diffSection(oldSec, newSec *config.Section, otherDefaults bool, defaults func() []*config.Section) {
	title := newSec.Title()
	before := len(p.reasons)
	if config.JoinWords(oldSec.Args) != config.JoinWords(newSec.Args) {
		p.reload(title, config.JoinWords(append([]string{newSec.Keyword}, newSec.Args...)), "section header changed")
	}
	if otherDefaults {
		p.reload(title, "", "inherits from a different defaults section")
	}
	if !newSec.IsProxy() {
		p.diffDirectives(title, oldSec.Directives, newSec.Directives)
		return
	}
	oldOther, oldServers := splitServers(oldSec.Directives)
	newOther, newServers := splitServers(newSec.Directives)
	p.diffDirectives(title, oldOther, newOther)
	if len(p.reasons) > before {
		return // the section reloads anyway; server reasons would be noise
	}
	// Same directives and same defaults on both sides: the desired side decides.
	p.diffServers(backendContext{section: newSec, defaults: defaults()}, oldServers, newServers)
}

// sectionAddedOrRemoved names a whole section that appears or disappears.
func (p *planner) sectionAddedOrRemoved(s *config.Section, what string) {
	if s.Keyword != "backend" {
		p.reload(s.Title(), "", what)
		return
	}
	verb := map[string]string{"added": "add", "removed": "del"}[what]
	if p.caps.AddBackend {
		// 3.4+ can do this at runtime, but the runtime package has no such operation yet.
		p.reload(s.Title(), "", what+": runtime "+verb+" backend is not supported by the agent yet")
		return
	}
	p.reload(s.Title(), "", what+": "+verb+" backend needs HAProxy 3.4"+p.versionNote())
}

func splitServers(ds []config.Directive) (other, servers []config.Directive) {
	for _, d := range ds {
		if d.Keyword == "server" {
			servers = append(servers, d)
		} else {
			other = append(other, d)
		}
	}
	return other, servers
}

// diffDirectives reports every directive added, removed, changed or moved. A removed
// and an added directive with the same keyword pair up as "changed".
func (p *planner) diffDirectives(section string, old, cur []config.Directive) {
	if sameDirectives(old, cur) {
		return
	}
	count := make(map[string]int, len(old))
	for _, d := range old {
		count[d.String()]++
	}
	var added []config.Directive
	for _, d := range cur {
		s := d.String()
		if count[s] > 0 {
			count[s]--
		} else {
			added = append(added, d)
		}
	}
	var removed []config.Directive
	for _, d := range old {
		if s := d.String(); count[s] > 0 {
			count[s]--
			removed = append(removed, d)
		}
	}
	if len(added) == 0 && len(removed) == 0 {
		for i := range cur {
			if cur[i].String() != old[i].String() {
				p.reload(section, cur[i].String(), "moved (directive order changed)")
				return
			}
		}
	}
	pendingRemoved := make(map[string][]config.Directive)
	for _, d := range removed {
		pendingRemoved[d.Keyword] = append(pendingRemoved[d.Keyword], d)
	}
	for _, d := range added {
		if olds := pendingRemoved[d.Keyword]; len(olds) > 0 {
			p.reload(section, d.String(), "changed from "+olds[0].String())
			pendingRemoved[d.Keyword] = olds[1:]
			continue
		}
		p.reload(section, d.String(), "added")
	}
	for _, d := range removed {
		if olds := pendingRemoved[d.Keyword]; len(olds) > 0 && olds[0].Line == d.Line {
			p.reload(section, d.String(), "removed")
			pendingRemoved[d.Keyword] = olds[1:]
		}
	}
}

func sameDirectives(a, b []config.Directive) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Keyword != b[i].Keyword || !slices.Equal(a[i].Args, b[i].Args) {
			return false
		}
	}
	return true
}
