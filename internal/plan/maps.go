package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// MaxSingleMapOps is the largest map diff sent as single add/set/del commands; a
// larger one replaces the whole map atomically (prepare/add @ver/commit), which is
// cheaper than many `del map` on a big map (~244 µs each on 2.6).
const MaxSingleMapOps = 100

// diffMap plans the runtime operations that turn the running map into the desired
// one. Only the entries of the hunks between the two files differ
// (parsedMaps.change).
func (p *planner) diffMap(old, cur bundle.File, desiredConfigText bundle.Text) {
	name, section := cur.Name, "map:"+cur.Name
	c := parsedMaps.change(old, cur)
	if len(c.hunks) == 0 {
		return // comments or blank lines only
	}
	if !p.caps.RuntimeMaps {
		p.reload(section, "", "runtime map updates need HAProxy 1.9"+p.versionNote())
		return
	}
	replace := c.old.dup || c.cur.dup
	var writes, deletes []runtime.Operation
	if !replace {
		// Without duplicates, a key of the changed entries on either side is in the
		// other file only if it is among the other side's changed entries.
		gone, came := c.changed()
		goneIdx, _ := indexEntries(gone)
		cameIdx, _ := indexEntries(came)
		// Single ops keep the entries of the running map in place and append new
		// ones; the result is compared with the desired order when order matters.
		var added []runtime.MapEntry
		for _, e := range gone {
			if v, ok := cameIdx[e.Key]; ok {
				if v != e.Value {
					writes = append(writes, &runtime.SetMap{Map: name, Key: e.Key, Value: v})
				}
				continue
			}
			deletes = append(deletes, &runtime.DelMap{Map: name, Key: e.Key})
		}
		for _, e := range came {
			if _, existed := goneIdx[e.Key]; !existed {
				added = append(added, e)
				writes = append(writes, &runtime.AddMap{Map: name, Key: e.Key, Value: e.Value})
			}
		}
		replace = len(writes)+len(deletes) > MaxSingleMapOps
		if !replace {
			inPlace := c.keptInPlace(goneIdx, cameIdx)
			if !c.inOrder(inPlace, goneIdx, len(added)) {
				replace = !sameLookups(name, desiredConfigText.String(), func() bool { return c.prefixOrderKept(inPlace, goneIdx, cameIdx, added) })
			}
		}
	}
	if replace {
		// Duplicate keys make single ops ambiguous (set/del touch every duplicate).
		p.validated(phaseMapWrite, fmt.Sprintf("%s\x00replace", name), section, "",
			&runtime.ReplaceMap{Map: name, Entries: c.cur.entries(0, c.cur.len())})
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

// inOrder reports whether single ops leave the running map's entries in the desired
// order: in every hunk the entries kept come in the desired order (inPlace,
// keptInPlace's answer), and the added ones go after the last entry of both maps.
func (c mapChange) inOrder(inPlace bool, goneIdx map[string]string, added int) bool {
	if !inPlace {
		return false
	}
	if added == 0 {
		return true
	}
	last := c.hunks[len(c.hunks)-1]
	if c.suffixN > 0 || last.A1 < c.oldN || last.B1 < c.curN {
		return false // an added entry lands after common entries
	}
	// every added entry is in the last hunk, after the kept ones
	seenAdded := 0
	for _, e := range c.curHunk(last) {
		if _, existed := goneIdx[e.Key]; !existed {
			seenAdded++
		} else if seenAdded > 0 {
			return false
		}
	}
	return seenAdded == added
}

// keptInPlace reports whether the entries that single ops keep (those of the
// running map not deleted) come in the same order as in the desired map: in each
// hunk, the kept old entries and the desired entries that are not added are the
// same keys in the same order. (Keys are unique: an entry that changed hunks
// breaks that.)
func (c mapChange) keptInPlace(goneIdx, cameIdx map[string]string) bool {
	for _, h := range c.hunks {
		old, cur := c.oldHunk(h), c.curHunk(h)
		i := 0
		for _, e := range old {
			if _, kept := cameIdx[e.Key]; !kept {
				continue
			}
			for i < len(cur) {
				if _, existed := goneIdx[cur[i].Key]; existed {
					break
				}
				i++
			}
			if i == len(cur) || cur[i].Key != e.Key {
				return false
			}
			i++
		}
		for ; i < len(cur); i++ {
			if _, existed := goneIdx[cur[i].Key]; existed {
				return false
			}
		}
	}
	return true
}

// maxAddedScan bounds the added entries whose prefix relations are found by a scan
// of the desired map; more are checked by prefixOrderKept's index.
const maxAddedScan = 16

// prefixOrderKept reports whether a map_beg lookup finds in the running map after
// single ops what it finds in the desired map. When the kept entries stay in
// place (inPlace) and only the added ones (appended in desired order) are out of
// place, an added key must come after every other key it begins with or that
// begins with it, as it will: a scan of the desired map. Otherwise the running
// middle is built and checked whole.
func (c mapChange) prefixOrderKept(inPlace bool, goneIdx, cameIdx map[string]string, added []runtime.MapEntry) bool {
	if inPlace && len(added) <= maxAddedScan {
		return addedAfterRelated(c.cur, added)
	}
	oldMid, curMid := c.old.entries(c.prefixN, c.prefixN+c.oldN), c.cur.entries(c.prefixN, c.prefixN+c.curN)
	kept := make([]runtime.MapEntry, 0, len(oldMid))
	for _, e := range oldMid {
		if _, changed := goneIdx[e.Key]; !changed {
			kept = append(kept, e)
		} else if v, ok := cameIdx[e.Key]; ok {
			kept = append(kept, runtime.MapEntry{Key: e.Key, Value: v})
		}
	}
	if !prefixOrderKept(append(kept, added...), curMid) {
		return false
	}
	for i := c.cur.len() - c.suffixN; i < c.cur.len(); i++ {
		e := c.cur.entry(i)
		for _, a := range added {
			if strings.HasPrefix(a.Key, e.Key) || strings.HasPrefix(e.Key, a.Key) {
				return false
			}
		}
	}
	return true
}

// addedAfterRelated reports whether, in the desired entries, no entry that is not
// added and whose key begins with an added key, or that an added key begins with,
// comes after that added key. Appended at the end in desired order, the added
// entries then keep their order against every key a map_beg lookup could find
// along with them.
func addedAfterRelated(desired *parsedMap, added []runtime.MapEntry) bool {
	isAdded := make(map[string]bool, len(added))
	for _, a := range added {
		isAdded[a.Key] = true
	}
	passed := 0 // added entries at or before the scan
	for i := range desired.len() {
		e := desired.entry(i)
		if isAdded[e.Key] {
			passed++
			continue
		}
		for _, a := range added[:passed] {
			if strings.HasPrefix(a.Key, e.Key) || strings.HasPrefix(e.Key, a.Key) {
				return false
			}
		}
	}
	return true
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

// sameLookups reports whether a map holding the entries single ops leave answers
// every lookup the desired configuration makes as the desired map does (same
// entries, keys unique). Exact matches do not depend on order; a prefix match
// (map_beg) only on the order of entries one of whose keys begins with the
// other's (prefixOrderKept), so a route's new entries appended at the end are as
// good as in the middle when no other key is a prefix of theirs. Any other use, or
// one plan cannot read, needs the desired order.
func sameLookups(name, configText string, prefixOrderKept func() bool) bool {
	types, known := mapMatchTypes(name, configText)
	if !known {
		return false
	}
	for t := range types {
		if !exactMatch[t] && t != "beg" {
			return false
		}
	}
	return !types["beg"] || prefixOrderKept()
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
