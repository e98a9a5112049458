package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// MaxSingleMapOps is the largest map diff sent as single add/set/del commands; a
// larger one replaces the whole map atomically (prepare/add @ver/commit), which is
// cheaper than many `del map` on a big map (~244 µs each on 2.6).
const MaxSingleMapOps = 100

// ParseMap reads a map file exactly as HAProxy does (runtime.ParseMapFile).
func ParseMap(text string) []runtime.MapEntry { return runtime.ParseMapFile(text) }

// diffMap plans the runtime operations that turn the running map into the desired
// one.
func (p *planner) diffMap(name, oldText, newText string, desiredConfig func() (*config.Config, error)) {
	section := "map:" + name
	old, cur := ParseMap(oldText), ParseMap(newText)
	if slices.Equal(old, cur) {
		return // comments or blank lines only
	}
	if !p.caps.RuntimeMaps {
		p.reload(section, "", "runtime map updates need HAProxy 1.9"+p.versionNote())
		return
	}
	oldIdx, oldDup := indexEntries(old)
	newIdx, newDup := indexEntries(cur)
	var writes, deletes []runtime.Operation
	// Single ops keep the entries of the running map in place and append new ones;
	// the result is compared with the desired order when order matters.
	var result []runtime.MapEntry
	for _, e := range old {
		if v, kept := newIdx[e.Key]; kept {
			result = append(result, runtime.MapEntry{Key: e.Key, Value: v})
			if v != e.Value {
				writes = append(writes, &runtime.SetMap{Map: name, Key: e.Key, Value: v})
			}
			continue
		}
		deletes = append(deletes, &runtime.DelMap{Map: name, Key: e.Key})
	}
	for _, e := range cur {
		if _, existed := oldIdx[e.Key]; !existed {
			result = append(result, e)
			writes = append(writes, &runtime.AddMap{Map: name, Key: e.Key, Value: e.Value})
		}
	}
	replace := oldDup || newDup || len(writes)+len(deletes) > MaxSingleMapOps ||
		(!slices.Equal(result, cur) && mapOrderMatters(name, desiredConfig))
	if replace {
		// Duplicate keys make single ops ambiguous (set/del touch every duplicate).
		p.validated(phaseMapWrite, fmt.Sprintf("%s\x00replace", name), section, "",
			&runtime.ReplaceMap{Map: name, Entries: cur})
		return
	}
	// Ops keep file order (desired order for writes, running order for deletes).
	for i, op := range writes {
		p.validated(phaseMapWrite, fmt.Sprintf("%s\x00%08d", name, i), section, mapOpLine(op), op)
	}
	for i, op := range deletes {
		p.validated(phaseMapDelete, fmt.Sprintf("%s\x00%08d", name, i), section, mapOpLine(op), op)
	}
}

func mapOpLine(op runtime.Operation) string {
	switch o := op.(type) {
	case *runtime.AddMap:
		return o.Key + " " + o.Value
	case *runtime.SetMap:
		return o.Key + " " + o.Value
	case *runtime.DelMap:
		return o.Key
	}
	return ""
}

func indexEntries(es []runtime.MapEntry) (map[string]string, bool) {
	m := make(map[string]string, len(es))
	dup := false
	for _, e := range es {
		if _, seen := m[e.Key]; seen {
			dup = true
			continue
		}
		m[e.Key] = e.Value
	}
	return m, dup
}

// mapRefRe finds map converters: map(<file>…), map_<match>(…), map_<match>_<out>(…).
var mapRefRe = regexp.MustCompile(`map(?:_([a-z]+))?(?:_[a-z]+)?\(([^,)]*)`)

// exactMatch are map match types whose lookup does not depend on entry order.
var exactMatch = map[string]bool{"": true, "str": true, "int": true}

// mapOrderMatters reports whether entry order can change lookups: true when the map
// is used with a list-based match (beg, reg, sub, …), referenced in a way plan does not
// recognise (an ACL's -f, say), or when the config could not be parsed.
func mapOrderMatters(name string, desiredConfig func() (*config.Config, error)) bool {
	cfg, err := desiredConfig()
	if err != nil {
		return true
	}
	refersTo := func(file string) bool { return file == name || strings.HasSuffix(file, "/"+name) }
	for _, s := range cfg.Sections {
		for _, d := range s.Directives {
			for _, arg := range d.Args {
				if !strings.Contains(arg, name) {
					continue
				}
				rest := arg
				for _, m := range mapRefRe.FindAllStringSubmatch(arg, -1) {
					if refersTo(m[2]) {
						if !exactMatch[m[1]] {
							return true
						}
						rest = strings.Replace(rest, m[0], "", 1)
					}
				}
				if strings.Contains(rest, name) && refersToAnywhere(rest, refersTo) {
					return true
				}
			}
		}
	}
	return false
}

// refersToAnywhere reports whether some path-like word in s names the map.
func refersToAnywhere(s string, refersTo func(string) bool) bool {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" ,()'\"{}", r) }) {
		if refersTo(w) {
			return true
		}
	}
	return false
}
