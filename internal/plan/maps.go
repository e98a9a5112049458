package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

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
func (p *planner) diffMap(name, oldText, newText, desiredConfigText string) {
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
		(!slices.Equal(result, cur) && !sameLookups(name, desiredConfigText, result, cur))
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

// refersToAnywhere reports whether some path-like word in s names the map.
func refersToAnywhere(s string, refersTo func(string) bool) bool {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" ,()'\"{}", r) }) {
		if refersTo(w) {
			return true
		}
	}
	return false
}

// sameLookups reports whether a map holding result answers every lookup the
// desired configuration makes as one holding desired does (same entries, keys
// unique). Exact matches do not depend on order; a prefix match (map_beg) only on
// the order of entries one of whose keys begins with the other's, so a route's
// new entries appended at the end are as good as in the middle when no other key
// is a prefix of theirs. Any other use, or one plan cannot read, needs the
// desired order.
func sameLookups(name, configText string, result, desired []runtime.MapEntry) bool {
	types, known := mapMatchTypes(name, configText)
	if !known {
		return false
	}
	for t := range types {
		if !exactMatch[t] && t != "beg" {
			return false
		}
	}
	if !types["beg"] {
		return true
	}
	return prefixOrderKept(result, desired)
}

// prefixOrderKept reports whether every two entries of which one key begins with
// the other's come in the same order in got as in want (keys unique, same set).
// The kept entries must keep their relative order; each entry out of place is
// checked against the keys that are its prefixes and the keys it prefixes.
func prefixOrderKept(got, want []runtime.MapEntry) bool {
	pos := make(map[string]int, len(want))
	for i, e := range want {
		pos[e.Key] = i
	}
	// Entries whose desired position is in ascending order along got are in
	// place relative to each other; the others are checked one by one.
	var moved []int
	last := -1
	for i, e := range got {
		if p := pos[e.Key]; p > last {
			last = p
			continue
		}
		moved = append(moved, i)
	}
	if len(moved) == 0 {
		return true
	}
	if len(moved) > MaxSingleMapOps {
		return false
	}
	gotPos := make(map[string]int, len(got))
	sorted := make([]string, 0, len(got))
	for i, e := range got {
		gotPos[e.Key] = i
		sorted = append(sorted, e.Key)
	}
	slices.Sort(sorted)
	// before reports whether a and b are in the same order in got and want.
	agree := func(a, b string) bool { return (gotPos[a] < gotPos[b]) == (pos[a] < pos[b]) }
	for _, i := range moved {
		k := got[i].Key
		for n := 0; n < len(k); n++ { // keys that are k's proper prefixes
			if _, ok := pos[k[:n]]; ok && !agree(k[:n], k) {
				return false
			}
		}
		j, _ := slices.BinarySearch(sorted, k)
		for j++; j < len(sorted) && strings.HasPrefix(sorted[j], k); j++ { // keys k prefixes
			if !agree(k, sorted[j]) {
				return false
			}
		}
	}
	return true
}

// mapMatchTypes reads, from the configuration's text, how the map is looked up:
// the match types of its map converters ("" for map(), "beg" for map_beg(), ...).
// known is false when a line names the map otherwise (an ACL's -f, a quoted
// argument) or names no converter plan recognises. Whole comment lines are skipped;
// the text is scanned, not parsed, so that a route's plan does not parse haproxy.cfg.
func mapMatchTypes(name, configText string) (types map[string]bool, known bool) {
	types = map[string]bool{}
	refersTo := func(file string) bool { return file == name || strings.HasSuffix(file, "/"+name) }
	rest := configText
	for {
		i := strings.Index(rest, name)
		if i < 0 {
			return types, true
		}
		start := strings.LastIndexByte(rest[:i], '\n') + 1
		end := len(rest)
		if j := strings.IndexByte(rest[i:], '\n'); j >= 0 {
			end = i + j
		}
		line := rest[start:end]
		rest = rest[end:]
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "#") {
			continue
		}
		if strings.ContainsAny(line, "\"'\\") {
			if refersToAnywhere(line, refersTo) {
				return nil, false
			}
			continue
		}
		left := line
		for _, m := range mapRefRe.FindAllStringSubmatch(line, -1) {
			if refersTo(m[2]) {
				types[m[1]] = true
				left = strings.Replace(left, m[0], "", 1)
			}
		}
		if strings.Contains(left, name) && refersToAnywhere(left, refersTo) {
			return nil, false
		}
	}
}
