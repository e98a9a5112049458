package validate

import (
	"slices"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// An endpoint that comes, goes or moves changes server lines of one backend, and a
// route with a Service of its own adds a backend section (its servers a moment
// later); a `haproxy -c` of the whole bundle for either took 0.15–0.4 s at 5,000
// routes, on the change's way to HAProxy. backendsOnly admits such a change without
// it when HAProxy cannot refuse it for a reason the lines' own checks do not catch:
//
//   - a changed section keeps its keyword, name and every line but its servers;
//   - an added section is a backend whose lines but its servers are those of a
//     section that passed beside it (the same defaults before both), with a name
//     HAProxy takes that the configuration holds nowhere else;
//   - a removed section is a backend whose name the configuration no longer holds
//     (nothing refers to it);
//   - each server line is a name unique in its section, an IP address and port, and
//     options written exactly as those of a server that passed in a section with the
//     same lines but servers.
//
// Custom ids (a proxy's `id`, a server's `id` option) and lines that name servers
// keep the full check: copied, they would clash; and a server gone that a line still
// names (a `use-server`, a `track`) does too.

// maxChangedSections bounds the sections of one change the check parses (a larger
// batch is checked whole).
const maxChangedSections = 64

// backendsOnly reports whether next, a haproxy.cfg, differs from prev (one that passed
// `haproxy -c`) only in backend sections as above. The span the two texts do not
// share is walked section by section (by header line); only the sections that differ
// are parsed, with the sections beside each as those it may be like.
func backendsOnly(prev, next bundle.Text) bool {
	pre, suf := bundle.CommonLines(prev, next)
	if pre >= prev.Len()-suf && pre >= next.Len()-suf {
		return false // (equal: not a change of backends)
	}
	from, ok := config.SectionStart(prev, pre)
	if !ok {
		return false
	}
	end := config.SectionEnd(prev, prev.Len()-suf)
	delta := next.Len() - prev.Len()
	was, okWas := sectionsIn(prev, from, end)
	is, okIs := sectionsIn(next, from, end+delta)
	if !okWas || !okIs {
		return false
	}
	span := spanOf(prev, was, from, end)
	parsed := 0
	for k, cur := range is {
		o, kept := span.index(cur.key, k)
		if kept {
			if span.claimed[o] {
				return false // (a header twice)
			}
			span.claimed[o] = true
			if was[o].text == cur.text {
				continue
			}
		}
		if parsed++; parsed > maxChangedSections {
			return false
		}
		c, ok := proxy(cur.text)
		if !ok {
			return false
		}
		var before *config.Section
		var likes []*config.Section
		if kept {
			if before, ok = proxy(was[o].text); !ok ||
				!slices.EqualFunc(notServers(before.Directives), notServers(c.Directives), sameDirective) {
				return false
			}
			likes = span.likes(o-1, o+1)
		} else {
			likes = span.likes(span.keptAround(is, k))
			if !plainNewBackend(c, likes) || !onlyAt(next, c.Args[0], cur.from, cur.to) {
				return false
			}
		}
		if !serversAdmitted(c, before, likes) || before != nil && !goneUnnamed(before, c, cur.text, next) {
			return false
		}
	}
	for _, o := range span.gone() {
		gone, ok := proxy(was[o].text)
		if !ok || gone.Keyword != "backend" || next.Contains(0, next.Len(), gone.Args[0]) {
			return false // a section gone that is not a backend, or is named still
		}
	}
	return true
}

// textSection is a section of a text found by its header line: the line (trimmed) as
// its key, where it is, and its text.
type textSection struct {
	key      string
	from, to int
	text     string
}

// sectionsIn are the sections of text in [from, to), where a section starts (ok
// false when a line there is a preprocessor line, or a section is a global or
// defaults one: what the sections after it inherit would change).
func sectionsIn(text bundle.Text, from, to int) ([]textSection, bool) {
	var out []textSection
	for at := from; at < to; {
		eol := text.IndexByte(at, '\n')
		if eol < 0 || eol >= to {
			eol = to - 1
		}
		line := text.Slice(at, eol+1)
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case config.IsPreprocessor(trimmed):
			return nil, false
		case config.StartsSection(line):
			key := strings.TrimRight(trimmed, " \t\r\n")
			if kw, _, _ := strings.Cut(key, " "); kw == "global" || kw == "defaults" {
				return nil, false
			}
			if n := len(out); n > 0 {
				out[n-1].to = at
			}
			out = append(out, textSection{key: key, from: at})
		case len(out) == 0:
			return nil, false // (from starts no section)
		}
		at = eol + 1
	}
	if len(out) > 0 {
		out[len(out)-1].to = to
	}
	for i := range out {
		out[i].text = text.Slice(out[i].from, out[i].to)
	}
	return out, true
}

// changedSpan is the sections of the span as they passed (was), how a section of the
// changed span finds its version there, which are found, and the sections beside
// the span.
type changedSpan struct {
	was           []textSection
	byKey         map[string]int // nil: the sections pair up by place
	claimed       []bool         // found as a version of a section of the change
	before, after string         // the texts of the sections beside the span ("": none)
}

// spanOf is the span's sections as they passed, with the sections beside it.
func spanOf(prev bundle.Text, was []textSection, from, end int) *changedSpan {
	s := &changedSpan{was: was, claimed: make([]bool, len(was))}
	if start, ok := config.SectionStart(prev, from); ok {
		s.before = prev.Slice(start, from)
	}
	if end < prev.Len() {
		s.after = prev.Slice(end, config.SectionEnd(prev, lineAfter(prev, end)))
	}
	return s
}

// index is the section of was that section k of the change, with header key, is a
// version of: the one at the same place while the headers pair up (servers changed),
// else the one with that header.
func (s *changedSpan) index(key string, k int) (int, bool) {
	if s.byKey == nil && k < len(s.was) && s.was[k].key == key {
		return k, true
	}
	if s.byKey == nil {
		s.byKey = make(map[string]int, len(s.was))
		for i, w := range s.was {
			s.byKey[w.key] = i // (headers are unique in a configuration that passed)
		}
	}
	o, ok := s.byKey[key]
	return o, ok
}

// gone are the sections of was no section of the change was found a version of.
func (s *changedSpan) gone() []int {
	var out []int
	for i, found := range s.claimed {
		if !found {
			out = append(out, i)
		}
	}
	return out
}

// keptAround are the sections of was beside section k of is, one added: the closest
// kept sections before and after it (-1 and len(was): beside the span).
func (s *changedSpan) keptAround(is []textSection, k int) (before, after int) {
	before, after = -1, len(s.was)
	for j := k - 1; j >= 0; j-- {
		if o, ok := s.index(is[j].key, j); ok {
			before = o
			break
		}
	}
	for j := k + 1; j < len(is); j++ {
		if o, ok := s.index(is[j].key, j); ok {
			after = o
			break
		}
	}
	return before, after
}

// likes are the sections at the places of was given, parsed (-1 and len(was): the
// sections beside the span), those of them that are backend or listen sections.
func (s *changedSpan) likes(at ...int) []*config.Section {
	var out []*config.Section
	for _, i := range at {
		t := s.before
		switch {
		case i >= len(s.was):
			t = s.after
		case i >= 0:
			t = s.was[i].text
		}
		if p, ok := proxy(t); ok {
			out = append(out, p)
		}
	}
	return out
}

// proxy parses text, one section, as a backend or listen section.
func proxy(text string) (*config.Section, bool) {
	c, err := config.Parse(text)
	if err != nil || len(c.Sections) != 1 {
		return nil, false
	}
	s := c.Sections[0]
	return s, config.IsProxyKeyword(s.Keyword) && len(s.Args) > 0
}

// lineAfter is the start of the line after the one at at.
func lineAfter(text bundle.Text, at int) int {
	if i := text.IndexByte(at, '\n'); i >= 0 {
		return i + 1
	}
	return text.Len()
}

// plainNewBackend reports whether s, a section added, is a backend with a name HAProxy
// takes whose lines but its servers are those of one of likes, and none of them a
// custom id or a line naming servers.
func plainNewBackend(s *config.Section, likes []*config.Section) bool {
	if s.Keyword != "backend" || len(s.Args) != 1 || !haproxyName(s.Args[0]) {
		return false
	}
	own := notServers(s.Directives)
	for _, d := range own {
		switch d.Keyword {
		case "id", "use-server", "force-persist", "ignore-persist", "server-template", "default-server":
			return false
		}
	}
	return slices.ContainsFunc(likes, func(l *config.Section) bool {
		return slices.EqualFunc(notServers(l.Directives), own, sameDirective)
	})
}

// onlyAt reports whether name occurs in text once, within [from, to) (where the
// section it names is).
func onlyAt(text bundle.Text, name string, from, to int) bool {
	n := 0
	for at := text.Index(0, name); at >= 0; at = text.Index(at+len(name), name) {
		if at < from || at >= to {
			return false
		}
		n++
	}
	return n == 1
}

// serversAdmitted reports whether every server line of cur is one that cannot fail
// (above): the options of a server of before (cur's version that passed; nil for a
// section added) or of a section of likes with cur's lines but servers.
func serversAdmitted(cur, before *config.Section, likes []*config.Section) bool {
	var accepted map[string]bool // the option texts of the servers that passed here
	admit := func(s *config.Section) {
		for _, d := range s.Directives {
			if d.Keyword == "server" && len(d.Args) >= 2 {
				accepted[strings.Join(d.Args[2:], " ")] = true
			}
		}
	}
	names := map[string]bool{}
	for _, d := range cur.Directives {
		if d.Keyword != "server" {
			continue
		}
		if accepted == nil {
			accepted = map[string]bool{}
			if before != nil {
				admit(before)
			}
			own := notServers(cur.Directives)
			for _, l := range likes {
				if slices.EqualFunc(notServers(l.Directives), own, sameDirective) {
					admit(l)
				}
			}
		}
		s, err := config.ReadServer(d)
		if err != nil || names[s.Name] || !haproxyName(s.Name) || slices.Contains(d.Args[2:], "id") ||
			!accepted[strings.Join(d.Args[2:], " ")] || !ipAndPort(s) {
			return false
		}
		names[s.Name] = true
	}
	return true
}

// goneUnnamed reports whether the servers of before that cur (text curText) no longer
// has are named nowhere: not in cur (a `use-server`, a server's `track` of it) nor as
// <section>/<server> in next (another section's `track`, a sample fetch).
func goneUnnamed(before, cur *config.Section, curText string, next bundle.Text) bool {
	now := map[string]bool{}
	for _, d := range cur.Directives {
		if d.Keyword == "server" && len(d.Args) > 0 {
			now[d.Args[0]] = true
		}
	}
	for _, d := range before.Directives {
		if d.Keyword != "server" || len(d.Args) == 0 || now[d.Args[0]] {
			continue
		}
		name := d.Args[0]
		if namedIn(bundle.TextOf(curText), name) || namedIn(next, before.Args[0]+"/"+name) {
			return false
		}
	}
	return true
}

// namedIn reports whether text holds name as a whole name (not within a longer one).
func namedIn(text bundle.Text, name string) bool {
	for at := text.Index(0, name); at >= 0; at = text.Index(at+1, name) {
		end := at + len(name)
		if (at == 0 || !nameByte(text.Slice(at-1, at)[0])) && (end == text.Len() || !nameByte(text.Slice(end, end+1)[0])) {
			return true
		}
	}
	return false
}

// haproxyName reports whether HAProxy takes name as a proxy's or a server's: letters,
// digits, '-', '_', '.' and ':'.
func haproxyName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		if !nameByte(c) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.:", c) >= 0
}

// ipAndPort reports whether s's address is an IP address and a port HAProxy takes.
func ipAndPort(s config.Server) bool {
	_, port, err := s.IPPort()
	return err == nil && port >= 1 && port <= 65535
}

// notServers is the directives but server lines.
func notServers(ds []config.Directive) []config.Directive {
	return slices.DeleteFunc(slices.Clone(ds), func(d config.Directive) bool { return d.Keyword == "server" })
}

func sameDirective(a, b config.Directive) bool {
	return a.Keyword == b.Keyword && slices.Equal(a.Args, b.Args)
}
