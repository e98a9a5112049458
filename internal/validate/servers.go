package validate

import (
	"slices"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// An endpoint that comes, goes or moves changes server lines of one backend, and a
// `haproxy -c` of the whole bundle for it took 0.15–0.19 s at 5,000 Ingresses (every
// such change, before its plan). serversOnly admits the change without it when
// HAProxy cannot refuse it for a reason the lines' own checks do not catch: every
// other line of the section is as it was, and each server line is a name unique in
// the section, an IP address and port, and options written exactly as those of a
// server line of the same section that passed.

// serversOnly reports whether next, a haproxy.cfg, differs from prev (one that passed
// `haproxy -c`) only in server lines of one backend or listen section, each of
// them one that cannot fail the check (above).
func serversOnly(prev, next bundle.Text) bool {
	pre, suf := bundle.CommonLines(prev, next)
	if pre >= prev.Len()-suf && pre >= next.Len()-suf {
		return false // (equal: not a change of servers)
	}
	from, ok := config.SectionStart(prev, pre)
	if !ok {
		return false
	}
	end := config.SectionEnd(prev, prev.Len()-suf)
	was, errWas := config.Parse(prev.Slice(from, end))
	is, errIs := config.Parse(next.Slice(from, end+next.Len()-prev.Len()))
	if errWas != nil || errIs != nil || len(was.Sections) != 1 || len(is.Sections) != 1 {
		return false
	}
	old, cur := was.Sections[0], is.Sections[0]
	if !config.IsProxyKeyword(cur.Keyword) || old.Keyword != cur.Keyword || !slices.Equal(old.Args, cur.Args) {
		return false
	}
	if !slices.EqualFunc(notServers(old.Directives), notServers(cur.Directives), sameDirective) {
		return false
	}
	accepted := map[string]bool{} // the option texts of the servers that passed
	for _, d := range old.Directives {
		if d.Keyword == "server" && len(d.Args) >= 2 {
			accepted[strings.Join(d.Args[2:], " ")] = true
		}
	}
	names := map[string]bool{}
	for _, d := range cur.Directives {
		if d.Keyword != "server" {
			continue
		}
		s, err := config.ReadServer(d)
		if err != nil || names[s.Name] || !accepted[strings.Join(d.Args[2:], " ")] || !ipAndPort(s) {
			return false
		}
		names[s.Name] = true
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
