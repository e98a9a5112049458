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

// parsedMap is a map file as HAProxy loads it (runtime.ParseMapFile): where each
// entry's key and value are in its text. Offsets, not strings: a derived parse
// shares the common entries' offsets with its parent (entrylist.go), and the
// remembered parses hold no pointers into texts for the collector to follow.
type parsedMap struct {
	at   entryList
	keys *keySet
	dup  bool // some key comes twice
	text bundle.Text
}

// entryAt is where an entry's key (text[k:ke]) and value (text[v:ve]) are; the
// key starts the entry's line, after blanks.
type entryAt struct{ k, ke, v, ve int32 }

func (a entryAt) moved(by int32) entryAt { return entryAt{a.k + by, a.ke + by, a.v + by, a.ve + by} }

func parseMap(text bundle.Text) *parsedMap {
	m := &parsedMap{at: newEntryList(parseAt(text, 0, text.Len())), text: text}
	m.keys, m.dup = mapKeys(m)
	return m
}

// parseAt parses the lines of text from from to to (whole lines) as
// runtime.ParseMapFile does, into offsets in text: piece by piece where the text
// is in pieces that end lines (a rendered map's are), else read as one string.
func parseAt(text bundle.Text, from, to int) []entryAt {
	var out []entryAt
	for from < to {
		end := to
		if n := text.PieceEnd(from); n < to && text.Slice(n-1, n) == "\n" {
			end = n
		}
		w := text.Slice(from, end)
		base := from
		runtime.EachMapEntry(w, func(key, value string) {
			k := base + offsetIn(w, key)
			v := k + len(key)
			if value != "" {
				v = base + offsetIn(w, value)
			}
			out = append(out, entryAt{int32(k), int32(k + len(key)), int32(v), int32(v + len(value))})
		})
		from += len(w)
	}
	return out
}

// offsetIn is where s, a substring of text, starts in it.
func offsetIn(text, s string) int {
	return int(uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(unsafe.StringData(text))))
}

func (m *parsedMap) len() int { return m.at.len() }

func (m *parsedMap) entry(i int) runtime.MapEntry {
	a := m.at.get(i)
	return runtime.MapEntry{Key: m.text.Slice(int(a.k), int(a.ke)), Value: m.text.Slice(int(a.v), int(a.ve))}
}

// entries returns entries i to j.
func (m *parsedMap) entries(i, j int) []runtime.MapEntry {
	out := make([]runtime.MapEntry, 0, j-i)
	for ; i < j; i++ {
		out = append(out, m.entry(i))
	}
	return out
}

// entriesBefore is how many entries have their line start before offset at (a line
// start).
func (m *parsedMap) entriesBefore(at int) int {
	return sort.Search(m.len(), func(i int) bool { return int(m.at.get(i).k) >= at })
}

// keySet is the keys of a map: a set of its own, or its parent's with the keys of
// out taken out and those of in put in (one change's), so that a map derived from
// another does not copy the other's keys. A chain longer than maxKeyDepth becomes
// one layer over its root's set (flattened), and a set of its own again when that
// layer has grown to a quarter of the set: every eighth change made the set anew,
// a pass over 30,000 keys of each map the change touched.
type keySet struct {
	own     map[string]bool
	parent  *keySet
	out, in map[string]bool
	depth   int
}

const maxKeyDepth = 8

func mapKeys(m *parsedMap) (*keySet, bool) {
	own := make(map[string]bool, m.len())
	dup := false
	for i := range m.len() {
		key := m.entry(i).Key
		dup = dup || own[key]
		own[key] = true
	}
	return &keySet{own: own}, dup
}

// flattened is k as one layer over the set of its own at the root of its chain; nil
// when that layer would hold more keys than a quarter of the set's.
func (k *keySet) flattened() *keySet {
	root := k
	for root.parent != nil {
		root = root.parent
	}
	f := &keySet{parent: root, out: map[string]bool{}, in: map[string]bool{}, depth: 1}
	for l := k; l.parent != nil; l = l.parent {
		for _, keys := range []map[string]bool{l.in, l.out} {
			for key := range keys {
				switch now, was := k.has(key), root.own[key]; {
				case now && !was:
					f.in[key] = true
				case !now && was:
					f.out[key] = true
				}
			}
		}
	}
	if 4*(len(f.in)+len(f.out)) > len(root.own) {
		return nil
	}
	return f
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
// common first and last lines (the middles, oldN and curN entries from prefixN on),
// and the hunks in which those differ.
type mapChange struct {
	old, cur         *parsedMap
	prefixN, suffixN int // entries in the common lines before and after
	oldN, curN       int
	// hunks are the middles' differences (entry indices into the middles): a
	// route's lines land apart in a sorted map, and what lies between them is
	// common too. One hunk of both whole middles when the diff would cost more
	// than diffBudget.
	hunks []bundle.Hunk
}

// diffBudget bounds a map diff's work, (oldN+curN)·D compares for D entries
// changed: a change of more than MaxSingleMapOps operations (a changed value is a
// delete and an insert) or of a large map in many places is not diffed.
const diffBudget = 4 << 20

// diff sets c.hunks.
func (c *mapChange) diff() {
	n := c.oldN + c.curN
	same := func(i, j int) bool { return c.oldMid(i) == c.curMid(j) }
	if hs, ok := bundle.HunksFunc(c.oldN, c.curN, same, min(2*MaxSingleMapOps, diffBudget/max(n, 1))); ok {
		c.hunks = hs
		return
	}
	c.hunks = []bundle.Hunk{{A0: 0, A1: c.oldN, B0: 0, B1: c.curN}}
}

// oldMid and curMid are entry i of the old and the desired middle.
func (c mapChange) oldMid(i int) runtime.MapEntry { return c.old.entry(c.prefixN + i) }
func (c mapChange) curMid(i int) runtime.MapEntry { return c.cur.entry(c.prefixN + i) }

// oldHunk and curHunk are the entries of hunk h on either side.
func (c mapChange) oldHunk(h bundle.Hunk) []runtime.MapEntry {
	return c.old.entries(c.prefixN+h.A0, c.prefixN+h.A1)
}
func (c mapChange) curHunk(h bundle.Hunk) []runtime.MapEntry {
	return c.cur.entries(c.prefixN+h.B0, c.prefixN+h.B1)
}

// changed returns the entries of the hunks on either side, in order: every entry
// of the middles that is not common to both.
func (c mapChange) changed() (gone, came []runtime.MapEntry) {
	for _, h := range c.hunks {
		gone = append(gone, c.oldHunk(h)...)
		came = append(came, c.curHunk(h)...)
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
	list := c.byName[f.Name]
	for _, m := range list { // the same text first: a compare of two is a scan
		if m.text.Same(f.Content) {
			return m
		}
	}
	for _, m := range list {
		if m.text.Equal(f.Content) {
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
	prefixN := o.entriesBefore(pre)
	suffixN := o.len() - o.entriesBefore(o.text.Len()-suf)
	mc := mapChange{old: o, prefixN: prefixN, suffixN: suffixN, oldN: o.len() - prefixN - suffixN}
	if n := c.get(cur); n != nil {
		mc.cur, mc.curN = n, n.len()-prefixN-suffixN
		mc.diff()
		return mc
	}
	mid := parseAt(cur.Content, pre, cur.Content.Len()-suf)
	n := &parsedMap{text: cur.Content}
	// The common entries are the same bytes of the new text: the first at the same
	// offsets, the last moved by the change's length.
	shift := int32(n.text.Len() - o.text.Len())
	n.at = o.at.derived(prefixN, mid, suffixN, shift)
	mc.cur, mc.curN = n, len(mid)
	mc.diff()
	gone, came := mc.changed()
	n.keys, n.dup = deriveKeys(o, gone, came, n)
	c.put(cur.Name, n)
	return mc
}

// deriveKeys is mapKeys(cur) for a map whose entries are old's with the
// entries oldMid (those of old not in entries, and maybe some that are) replaced by
// curMid: without duplicates in old, old's keys with oldMid's taken out and
// curMid's put in.
func deriveKeys(old *parsedMap, oldMid, curMid []runtime.MapEntry, cur *parsedMap) (*keySet, bool) {
	parent := old.keys
	if !old.dup && parent.depth >= maxKeyDepth {
		parent = parent.flattened()
	}
	if old.dup || parent == nil {
		return mapKeys(cur)
	}
	k := &keySet{parent: parent, out: make(map[string]bool, len(oldMid)), in: make(map[string]bool, len(curMid)), depth: parent.depth + 1}
	// (copies: a chain must not keep the texts the keys were parsed from alive)
	for _, e := range oldMid {
		k.out[strings.Clone(e.Key)] = true
	}
	for _, e := range curMid {
		// a duplicate: twice in the middle, or also in the common lines
		if k.in[e.Key] || (!k.out[e.Key] && parent.has(e.Key)) {
			return mapKeys(cur)
		}
		k.in[strings.Clone(e.Key)] = true
	}
	return k, false
}
