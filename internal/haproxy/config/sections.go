package config

// sectionKeywords are the words that start a section of haproxy.cfg when they are
// the first word of a line: HAProxy 2.6's sections and those of later versions
// (crt-store 3.0, traces 3.1, acme 3.2), so that a newer config still splits
// correctly. This is the only list: the planner, the renderer's normalisation and
// the agent's read-back all use it.
var sectionKeywords = map[string]bool{
	"global": true, "defaults": true, "frontend": true, "backend": true, "listen": true,
	"userlist": true, "peers": true, "resolvers": true, "http-errors": true, "ring": true,
	"cache": true, "program": true, "mailers": true, "fcgi-app": true, "log-forward": true,
	"crt-store": true, "traces": true, "acme": true,
}

// IsSectionKeyword reports whether word starts a section.
func IsSectionKeyword(word string) bool { return sectionKeywords[word] }

// IsProxyKeyword reports whether a section keyword makes a proxy that holds servers
// (backend and listen).
func IsProxyKeyword(keyword string) bool { return keyword == "backend" || keyword == "listen" }

// InheritsDefaults reports whether a section keyword makes a proxy that takes its
// settings from the defaults section before it (or the one named by "from"):
// frontend, backend and listen.
func InheritsDefaults(keyword string) bool {
	return keyword == "frontend" || IsProxyKeyword(keyword)
}
