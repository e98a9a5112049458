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
// keep the full check: copied, they would clash.

// maxChangedRegion bounds the text the check parses (the sections the change spans).
const maxChangedRegion = 1 << 20

// backendsOnly reports whether next, a haproxy.cfg, differs from prev (one that passed
// `haproxy -c`) only in backend sections as above.
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
	if end-from > maxChangedRegion || end+delta-from > maxChangedRegion {
		return false
	}
	was, okWas := proxies(prev.Slice(from, end))
	is, okIs := proxies(next.Slice(from, end+delta))
	if !okWas || !okIs {
		return false
	}
	// the sections that passed beside the change, for added sections' lines and
	// servers' options: those it spans and the one on either side
	likes := slices.Clone(was)
	if start, ok := config.SectionStart(prev, from); ok {
		if before, ok := proxies(prev.Slice(start, from)); ok {
			likes = append(likes, before...)
		}
	}
	if end < prev.Len() {
		if after, ok := proxies(prev.Slice(end, config.SectionEnd(prev, lineAfter(prev, end)))); ok {
			likes = append(likes, after...)
		}
	}
	old := map[string]*config.Section{}
	for _, s := range was {
		old[sectionKey(s)] = s
	}
	if len(old) != len(was) {
		return false
	}
	seen := map[string]bool{}
	for _, cur := range is {
		key := sectionKey(cur)
		if seen[key] {
			return false
		}
		seen[key] = true
		o, kept := old[key]
		switch {
		case kept && sameSection(o, cur):
			continue
		case kept:
			if !slices.EqualFunc(notServers(o.Directives), notServers(cur.Directives), sameDirective) {
				return false
			}
		case !plainNewBackend(cur, likes) || !onlyAt(next, cur.Args[0], from, end+delta):
			return false
		}
		if !serversAdmitted(cur, o, kept, likes) {
			return false
		}
	}
	for key, o := range old {
		if !seen[key] && (o.Keyword != "backend" || next.Contains(0, next.Len(), o.Args[0])) {
			return false // a section gone that is not a backend, or is named still
		}
	}
	return true
}

// proxies parses text, whole sections, as backend and listen sections (ok false when
// it holds another kind, a preprocessor line or fails to parse).
func proxies(text string) ([]*config.Section, bool) {
	for line := range strings.Lines(text) {
		if config.IsPreprocessor(strings.TrimLeft(line, " \t")) {
			return nil, false
		}
	}
	c, err := config.Parse(text)
	if err != nil {
		return nil, false
	}
	for _, s := range c.Sections {
		if !config.IsProxyKeyword(s.Keyword) || len(s.Args) == 0 {
			return nil, false
		}
	}
	return c.Sections, true
}

// lineAfter is the start of the line after the one at at.
func lineAfter(text bundle.Text, at int) int {
	if i := text.IndexByte(at, '\n'); i >= 0 {
		return i + 1
	}
	return text.Len()
}

func sectionKey(s *config.Section) string { return s.Keyword + " " + strings.Join(s.Args, " ") }

func sameSection(a, b *config.Section) bool {
	return slices.EqualFunc(a.Directives, b.Directives, sameDirective)
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
// (above): the options of a server of o (cur's version that passed, when kept) or of
// a section of likes with cur's lines but servers.
func serversAdmitted(cur, o *config.Section, kept bool, likes []*config.Section) bool {
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
			if kept {
				admit(o)
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

// haproxyName reports whether HAProxy takes name as a proxy's or a server's: letters,
// digits, '-', '_', '.' and ':'.
func haproxyName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.:", c) >= 0) {
			return false
		}
	}
	return true
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
