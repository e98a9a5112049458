package plan

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// parsedMap is a map file as HAProxy loads it (runtime.ParseMapFile), with where
// each entry's line starts and its keys.
type parsedMap struct {
	entries []runtime.MapEntry
	starts  []int
	keys    *keySet
	dup     bool // some key comes twice
	text    string
}

func parseMap(text string) *parsedMap {
	entries, starts := runtime.ParseMapFileAt(text)
	keys, dup := mapKeys(entries)
	return &parsedMap{entries: entries, starts: starts, keys: keys, dup: dup, text: text}
}

// keySet is the keys of a map: a set of its own, or its parent's with the keys of
// out taken out and those of in put in (one change's), so that a map derived from
// another does not copy the other's keys. A chain longer than maxKeyDepth is made
// a set of its own again.
type keySet struct {
	own     map[string]bool
	parent  *keySet
	out, in map[string]bool
	depth   int
}

const maxKeyDepth = 8

func mapKeys(entries []runtime.MapEntry) (*keySet, bool) {
	own := make(map[string]bool, len(entries))
	dup := false
	for _, e := range entries {
		dup = dup || own[e.Key]
		own[e.Key] = true
	}
	return &keySet{own: own}, dup
}

func (k *keySet) has(key string) bool {
	for ; k.parent != nil; k = k.parent {
		if k.in[key] {
			return true
		}
		if k.out[key] {
			return false
		}
	}
	return k.own[key]
}

// mapChange is how two map files differ: the entries of the lines between their
// common first and last lines, and those lines' entries on both sides.
type mapChange struct {
	old, cur         *parsedMap
	oldMid, curMid   []runtime.MapEntry
	prefixN, suffixN int // entries in the common lines before and after
	// hunks are the middles' differences (entry indices into oldMid and curMid): a
	// route's lines land apart in a sorted map, and what lies between them is
	// common too. One hunk of both whole middles when the diff would cost more
	// than diffBudget.
	hunks []bundle.Hunk
}

// diffBudget bounds a map diff's work, (len(oldMid)+len(curMid))·D compares for D
// entries changed: a change of more than MaxSingleMapOps operations (a changed
// value is a delete and an insert) or of a large map in many places is not
// diffed.
const diffBudget = 4 << 20

// diff sets c.hunks.
func (c *mapChange) diff() {
	n := len(c.oldMid) + len(c.curMid)
	if hs, ok := bundle.Hunks(c.oldMid, c.curMid, min(2*MaxSingleMapOps, diffBudget/max(n, 1))); ok {
		c.hunks = hs
		return
	}
	c.hunks = []bundle.Hunk{{A0: 0, A1: len(c.oldMid), B0: 0, B1: len(c.curMid)}}
}

// changed returns the entries of the hunks on either side, in order: every entry
// of the middles that is not common to both.
func (c mapChange) changed() (gone, came []runtime.MapEntry) {
	if len(c.hunks) == 1 {
		h := c.hunks[0]
		return c.oldMid[h.A0:h.A1], c.curMid[h.B0:h.B1]
	}
	for _, h := range c.hunks {
		gone = append(gone, c.oldMid[h.A0:h.A1]...)
		came = append(came, c.curMid[h.B0:h.B1]...)
	}
	return gone, came
}

// parsedMaps remembers the parse of the map files plans saw last. A route's change
// rewrites a few lines of maps thousands of lines long, and the map the next plan
// finds running is the one this plan wanted: that one is derived from the running
// map's parse by parsing only the lines that differ, so a plan costs the change,
// not the map. A parse is found by name and content (not by hash: a compare is
// cheap and trusts nothing that came with the file).
var parsedMaps = &mapParses{byName: map[string][]*parsedMap{}}

// mapParsesPerName bounds what is remembered of one map name: the running and the
// desired map of a fleet or two.
const mapParsesPerName = 4

type mapParses struct {
	mu     sync.Mutex
	byName map[string][]*parsedMap
}

func (c *mapParses) get(f bundle.File) *parsedMap {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.byName[f.Name] {
		if m.text == f.Content {
			return m
		}
	}
	return nil
}

func (c *mapParses) put(name string, m *parsedMap) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.byName[name]
	if len(list) >= mapParsesPerName {
		list = slices.Delete(list, 0, 1) // the oldest, cleared: not kept alive
	}
	c.byName[name] = append(list, m)
}

// parse returns f's parse, remembered or new.
func (c *mapParses) parse(f bundle.File) *parsedMap {
	if m := c.get(f); m != nil {
		return m
	}
	m := parseMap(f.Content)
	c.put(f.Name, m)
	return m
}

// change parses cur against old: only the lines between their common first and
// last lines are parsed anew.
func (c *mapParses) change(old, cur bundle.File) mapChange {
	o := c.parse(old)
	pre, suf := bundle.CommonLines(old.Content, cur.Content)
	prefixN := sort.SearchInts(o.starts, pre)                             // entries whose line starts before pre
	suffixN := len(o.starts) - sort.SearchInts(o.starts, len(o.text)-suf) // entries whose line starts in the suffix
	mc := mapChange{old: o, prefixN: prefixN, suffixN: suffixN, oldMid: o.entries[prefixN : len(o.entries)-suffixN]}
	if n := c.get(cur); n != nil {
		mc.cur = n
		mc.curMid = n.entries[prefixN : len(n.entries)-suffixN]
		mc.diff()
		return mc
	}
	mid, midStarts := runtime.ParseMapFileAt(cur.Content[pre : len(cur.Content)-suf])
	n := &parsedMap{text: cur.Content}
	shift := len(n.text) - len(o.text)
	// The common entries are the same bytes of the new text: taken from it, not
	// from the old one, so that no parse keeps an earlier map's text alive.
	n.entries = make([]runtime.MapEntry, 0, prefixN+len(mid)+suffixN)
	for _, e := range o.entries[:prefixN] {
		n.entries = append(n.entries, rebase(e, o.text, n.text, 0))
	}
	n.entries = append(n.entries, mid...)
	for _, e := range o.entries[len(o.entries)-suffixN:] {
		n.entries = append(n.entries, rebase(e, o.text, n.text, shift))
	}
	n.starts = make([]int, 0, len(n.entries))
	n.starts = append(n.starts, o.starts[:prefixN]...)
	for _, s := range midStarts {
		n.starts = append(n.starts, pre+s)
	}
	for _, s := range o.starts[len(o.starts)-suffixN:] {
		n.starts = append(n.starts, s+shift)
	}
	mc.cur, mc.curMid = n, mid
	mc.diff()
	gone, came := mc.changed()
	n.keys, n.dup = deriveKeys(o, gone, came, n.entries)
	c.put(cur.Name, n)
	return mc
}

// rebase returns e with its key and value taken from to, where the bytes they hold
// in from are, moved by shift (every parsed entry is a substring of its text).
func rebase(e runtime.MapEntry, from, to string, shift int) runtime.MapEntry {
	return runtime.MapEntry{Key: rebaseString(e.Key, from, to, shift), Value: rebaseString(e.Value, from, to, shift)}
}

func rebaseString(s, from, to string, shift int) string {
	if s == "" {
		return ""
	}
	at := int(uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(unsafe.StringData(from))))
	if at < 0 || at+len(s) > len(from) || at+shift < 0 || at+shift+len(s) > len(to) || to[at+shift:at+shift+len(s)] != s {
		return strings.Clone(s) // not a substring of from: keep a copy of its own
	}
	return to[at+shift : at+shift+len(s)]
}

// deriveKeys is mapKeys(entries) for a map whose entries are old's with the
// entries oldMid (those of old not in entries, and maybe some that are) replaced by
// curMid: without duplicates in old, old's keys with oldMid's taken out and
// curMid's put in.
func deriveKeys(old *parsedMap, oldMid, curMid, entries []runtime.MapEntry) (*keySet, bool) {
	if old.dup || old.keys.depth >= maxKeyDepth {
		return mapKeys(entries)
	}
	k := &keySet{parent: old.keys, out: make(map[string]bool, len(oldMid)), in: make(map[string]bool, len(curMid)), depth: old.keys.depth + 1}
	// (copies: a chain must not keep the texts the keys were parsed from alive)
	for _, e := range oldMid {
		k.out[strings.Clone(e.Key)] = true
	}
	for _, e := range curMid {
		// a duplicate: twice in the middle, or also in the common lines
		if k.in[e.Key] || (!k.out[e.Key] && old.keys.has(e.Key)) {
			return mapKeys(entries)
		}
		k.in[strings.Clone(e.Key)] = true
	}
	return k, false
}
