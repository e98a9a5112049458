package plan

import (
	"maps"
	"slices"
	"strings"
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
	in, out string
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
func (m *mapTranslations) translate(name, text string, aliases map[string]string) (out, hash string) {
	if len(aliases) == 0 {
		return text, bundle.HashContent(text)
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
		if t.in == text && same {
			base, pre, suf = t, len(text), 0
			break
		}
		p, s := bundle.CommonLines(t.in, text)
		if !same && !namesNone(t.in, p, s, t.aliases, aliases) {
			continue
		}
		if base == nil || p+s > pre+suf {
			base, pre, suf = t, p, s
		}
		if 2*(pre+suf) >= len(text) {
			break // shares most of its lines: another compare (a scan) would gain little
		}
	}
	m.mu.Unlock()
	same := false
	switch {
	case base != nil && base.in == text:
		out, same, hash = base.out, base.same, bundle.HashContent(base.out)
	case base == nil || pre+suf == 0:
		out = translateMap(text, aliases)
		same, hash = out == text, bundle.HashContent(out)
	case base.same && translateMap(text[pre:len(text)-suf], aliases) == text[pre:len(text)-suf]:
		// Nothing to translate before or now: the map is its own translation, and
		// was hashed as rendered.
		out, same, hash = text, true, bundle.HashContent(text)
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
func namesNone(text string, pre, suf int, some, aliases map[string]string) bool {
	if len(some) == len(aliases) {
		return true
	}
	if len(aliases)-len(some) > maxAddedAliases {
		return false
	}
	for d := range aliases {
		if _, had := some[d]; !had && (strings.Contains(text[:pre], d) || strings.Contains(text[len(text)-suf:], d)) {
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
func spliceTranslation(base *translation, text string, pre, suf int, aliases map[string]string) string {
	headLines := strings.Count(base.in[:pre], "\n")
	terminated := strings.HasSuffix(base.in, "\n") // then so is base.out
	tailLines := strings.Count(base.in[len(base.in)-suf:], "\n")
	if !terminated && suf > 0 {
		tailLines++ // the last line has no newline
	}
	head := afterLines(base.out, headLines)
	tail := len(base.out) - beforeLastLines(base.out, tailLines, terminated)
	mid := translateMap(text[pre:len(text)-suf], aliases)
	var b strings.Builder
	b.Grow(head + len(mid) + tail)
	b.WriteString(base.out[:head])
	b.WriteString(mid)
	b.WriteString(base.out[len(base.out)-tail:])
	out := b.String()
	bundle.Edited(base.out, out, head, tail) // for the plan's compare of the two
	return out
}

// afterLines is the byte offset after the first n lines of s.
func afterLines(s string, n int) int {
	f := lineFinder{text: s, line: 1}
	return f.start(n + 1)
}

// beforeLastLines is the byte offset where the last n lines of s start; when
// terminated, s ends with a newline that ends its last line.
func beforeLastLines(s string, n int, terminated bool) int {
	lines := strings.Count(s, "\n")
	if !terminated {
		lines++
	}
	return afterLines(s, lines-n)
}
