package plan

import (
	"maps"
	"slices"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// translatedMaps remembers the last translations (translateMap) of each map. A pod
// whose backends were placed into pool slots runs every map translated, so every
// plan translates every desired map; a route's change rewrites a few lines of maps
// thousands of lines long, and only those lines are translated again: the rest is
// copied from the last translation of the same map under the same aliases.
var translatedMaps = &mapTranslations{byName: map[string][]*translation{}}

// translationsKept is how many translations of one map are remembered (fleets and
// pods planned in turn).
const translationsKept = 4

type translation struct {
	in, out bundle.Text
	aliases map[string]string
	// same: out is in (no line names an aliased backend).
	same bool
}

type mapTranslations struct {
	mu     sync.Mutex
	byName map[string][]*translation
}

// translate is translateMap(text, aliases), derived from the remembered
// translation of name whose input shares the most lines with text, under the same
// aliases or fewer (a route's backend added into a pool slot since) that its common
// lines do not name, and hashed (bundle.HashEdited) from that translation's hash.
func (m *mapTranslations) translate(name string, text bundle.Text, aliases map[string]string) (out bundle.Text, hash string) {
	if len(aliases) == 0 {
		return text, bundle.HashText(text)
	}
	m.mu.Lock()
	var base *translation
	pre, suf := 0, 0
	kept := m.byName[name]
	for i := len(kept) - 1; i >= 0; i-- { // the latest first: most likely the last version
		t := kept[i]
		same := maps.Equal(t.aliases, aliases)
		if !same && !withinAliases(t.aliases, aliases) {
			continue
		}
		if same && t.in.Equal(text) {
			base, pre, suf = t, text.Len(), 0
			break
		}
		p, s := bundle.CommonLines(t.in, text)
		if !same && !namesNone(t.in, p, s, t.aliases, aliases) {
			continue
		}
		if base == nil || p+s > pre+suf {
			base, pre, suf = t, p, s
		}
		if 2*(pre+suf) >= text.Len() {
			break // shares most of its lines: another compare (a scan) would gain little
		}
	}
	m.mu.Unlock()
	same := false
	mid := func() string { return text.Slice(pre, text.Len()-suf) }
	switch {
	case base != nil && base.in.Equal(text):
		out, same, hash = base.out, base.same, bundle.HashText(base.out)
	case base == nil || pre+suf == 0:
		flat := text.String()
		translated := translateMap(flat, aliases)
		out, same = bundle.TextOf(translated), translated == flat
		hash = bundle.HashText(out)
	case base.same && translateMap(mid(), aliases) == mid():
		// Nothing to translate before or now: the map is its own translation, and
		// was hashed as rendered.
		out, same, hash = text, true, bundle.HashText(text)
	default:
		out = spliceTranslation(base, text, pre, suf, aliases)
		hash = bundle.HashEdited(base.out, out)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	kept = m.byName[name]
	if len(kept) == translationsKept {
		kept = slices.Delete(kept, 0, 1) // the oldest, cleared: not kept alive
	}
	m.byName[name] = append(kept, &translation{in: text, out: out, aliases: aliases, same: same})
	return out, hash
}

// withinAliases reports whether every alias of some is one of all's.
func withinAliases(some, all map[string]string) bool {
	if len(some) > len(all) {
		return false
	}
	for d, r := range some {
		if all[d] != r {
			return false
		}
	}
	return true
}

// namesNone reports whether the first pre and last suf bytes of text translate
// under aliases as under some (a subset of them: a route's backend added since into
// a pool slot): none of them holds a backend aliases add (as a substring, at worst
// a line translated again).
func namesNone(text bundle.Text, pre, suf int, some, aliases map[string]string) bool {
	if len(some) == len(aliases) {
		return true
	}
	if len(aliases)-len(some) > maxAddedAliases {
		return false
	}
	for d := range aliases {
		if _, had := some[d]; !had && (text.Contains(0, pre, d) || text.Contains(text.Len()-suf, text.Len(), d)) {
			return false
		}
	}
	return true
}

// maxAddedAliases bounds the aliases added since a translation that translate looks
// for in its text (a scan each).
const maxAddedAliases = 4

// spliceTranslation translates text whose first pre and last suf bytes are whole
// lines of base.in: those lines' translations are the same lines of base.out, found
// by counting lines (translateMap keeps one output line per input line).
func spliceTranslation(base *translation, text bundle.Text, pre, suf int, aliases map[string]string) bundle.Text {
	in, out := base.in, base.out
	headLines := in.CountByte(0, pre, '\n')
	terminated := in.Len() > 0 && in.Slice(in.Len()-1, in.Len()) == "\n" // then so is base.out
	tailLines := in.CountByte(in.Len()-suf, in.Len(), '\n')
	if !terminated && suf > 0 {
		tailLines++ // the last line has no newline
	}
	head := out.AfterLines(headLines)
	tail := out.Len() - beforeLastLines(out, tailLines, terminated)
	mid := translateMap(text.Slice(pre, text.Len()-suf), aliases)
	translated := out.Edited(head, out.Len()-tail, mid)
	bundle.Edited(out, translated, head, tail) // for the plan's compare of the two
	return translated
}

// beforeLastLines is the byte offset where the last n lines of s start; when
// terminated, s ends with a newline that ends its last line.
func beforeLastLines(s bundle.Text, n int, terminated bool) int {
	lines := s.CountByte(0, s.Len(), '\n')
	if !terminated {
		lines++
	}
	return s.AfterLines(lines - n)
}
