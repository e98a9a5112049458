package plan

import (
	"sort"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// PoolPrefix starts the names of spare backends a template declares so that new
// routes can be served without a reload on HAProxy before 3.4 (no `add backend`).
// Pool backends are capacity, not content: a desired pool backend that is not
// running is not needed until the next reload, and one whose name now serves a
// desired backend is simply in use.
const PoolPrefix = "haptic_pool_"

// Running is what runs on one pod: the files on its disk (which equal what its
// HAProxy runs) and the desired backends that run under another backend's name.
type Running struct {
	Bundle *bundle.Bundle `json:"bundle"`
	// Aliases maps a desired backend to the running backend that serves it: a pool
	// backend or a backend whose routes were removed.
	Aliases map[string]string `json:"aliases,omitempty"`
}

// placement is the desired configuration as it will run on the pod: new backends
// renamed to the spare backends that take them, removed backends kept (emptied).
type placement struct {
	text    string            // the haproxy.cfg to write and compare
	aliases map[string]string // desired backend → running backend (renamed ones only)
}

// place decides which spare running backend serves each new desired backend.
//
// A spare is a running backend no desired backend claims under its own name (its
// routes were removed), or a pool backend. It can take a new backend when it has
// no servers and everything but its name — header arguments, non-server directives,
// the defaults it inherits — is the same. Candidates are tried pool backends first,
// then by name, so the result is deterministic. Running backends nobody claims stay
// running without their servers: 2.6 cannot delete a backend, and an unreferenced
// empty backend is harmless until the next reload drops it.
func place(run *config.Config, runText string, want *config.Config, wantText string, previous map[string]string) placement {
	rl, wl := layoutOf(run), layoutOf(want)
	runB, wantB := rl.backends, wl.backends
	runInherit, wantInherit := rl.inherit, wl.inherit

	aliases := map[string]string{}
	taken := map[string]bool{} // running names that serve a desired backend
	for _, d := range sortedKeys(previous) {
		r := previous[d]
		if wantB[d] == nil || runB[r] == nil || runB[d] != nil || taken[r] || (wantB[r] != nil && !isPool(r)) {
			continue
		}
		aliases[d], taken[r] = r, true
	}
	for name, s := range wantB {
		if _, renamed := aliases[name]; !renamed && !isPool(name) && runB[name] != nil {
			taken[s.Name] = true
		}
	}

	var spares []string
	for name := range runB {
		if !taken[name] {
			spares = append(spares, name)
		}
	}
	sort.Slice(spares, func(i, j int) bool {
		if isPool(spares[i]) != isPool(spares[j]) {
			return isPool(spares[i])
		}
		return spares[i] < spares[j]
	})
	for _, d := range wl.names {
		if isPool(d) || runB[d] != nil {
			continue
		}
		if _, renamed := aliases[d]; renamed {
			continue
		}
		sig := signature(wantB[d], wantInherit)
		for _, r := range spares {
			if !taken[r] && !hasServers(runB[r]) && signature(runB[r], runInherit) == sig {
				aliases[d], taken[r] = r, true
				break
			}
		}
	}

	// Desired pool backends are dropped when their name is in use or they are not
	// running; running backends nobody claims are kept, without servers.
	drop := map[string]bool{}
	for name := range wantB {
		if isPool(name) && (taken[name] || runB[name] == nil) {
			drop[name] = true
		}
	}
	var retired []int // run's sections
	for i, s := range run.Sections {
		if s.Keyword == "backend" && s.Name != "" && !taken[s.Name] && (wantB[s.Name] == nil || drop[s.Name]) {
			retired = append(retired, i)
		}
	}
	if len(aliases) == 0 && len(drop) == 0 && len(retired) == 0 {
		return placement{text: wantText}
	}
	var b strings.Builder
	writeSections(&b, want, wantText, func(s *config.Section) (string, bool) {
		if s.Keyword != "backend" {
			return "", true
		}
		if r, ok := aliases[s.Name]; ok {
			return r, true
		}
		return "", !drop[s.Name]
	})
	runLines := textLines(runText)
	for _, i := range retired {
		servers := map[int]bool{}
		for _, d := range run.Sections[i].Directives {
			if d.Keyword == "server" {
				servers[run.DirectiveLine(i, d)] = true
			}
		}
		start, end := sectionSpan(run, i, len(runLines))
		for n := start; n <= end; n++ {
			if !servers[n] {
				b.WriteString(runLines[n-1])
				b.WriteByte('\n')
			}
		}
	}
	return placement{text: b.String(), aliases: aliases}
}

// writeSections copies text section by section; keep says whether a section stays
// and, for a backend, the name it is renamed to ("" keeps its name).
func writeSections(b *strings.Builder, c *config.Config, text string, keep func(*config.Section) (rename string, ok bool)) {
	lines := textLines(text)
	first := len(lines) + 1
	for i, s := range c.Sections {
		if s.Keyword != "" {
			first = c.SectionLine(i)
			break
		}
	}
	for n := 1; n < first && n <= len(lines); n++ {
		b.WriteString(lines[n-1])
		b.WriteByte('\n')
	}
	for i, s := range c.Sections {
		if s.Keyword == "" {
			continue
		}
		rename, ok := keep(s)
		if !ok {
			continue
		}
		start, end := sectionSpan(c, i, len(lines))
		for n := start; n <= end; n++ {
			if n == start && rename != "" {
				b.WriteString(config.JoinWords(append([]string{s.Keyword, rename}, s.Args[1:]...)))
			} else {
				b.WriteString(lines[n-1])
			}
			b.WriteByte('\n')
		}
	}
}

// sectionSpan is the first and last line (1-based) of section i of c: from its
// header to the line before the next section's header.
func sectionSpan(c *config.Config, i, lineCount int) (int, int) {
	end := lineCount
	if i+1 < len(c.Sections) {
		end = min(c.SectionLine(i+1)-1, lineCount)
	}
	return c.SectionLine(i), end
}

// translateMap rewrites entries that name a renamed backend: a value that is the
// backend's name, and a key that is its name or starts with "<name>/" (per-backend
// settings maps). A map that names none returns text itself.
func translateMap(text string, aliases map[string]string) string {
	if len(aliases) == 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	changed := false
	for i, line := range lines {
		trimmed := strings.Trim(line, " \t\r")
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		key, value := trimmed, ""
		if j := strings.IndexAny(trimmed, " \t"); j >= 0 {
			key, value = trimmed[:j], strings.TrimLeft(trimmed[j:], " \t")
		}
		newKey, newValue := key, value
		if r, ok := aliases[value]; ok {
			newValue = r
		}
		name, rest, _ := strings.Cut(key, "/")
		if r, ok := aliases[name]; ok {
			newKey = r
			if rest != "" || strings.HasSuffix(key, "/") {
				newKey += "/" + rest
			}
		}
		if newKey != key || newValue != value {
			lines[i] = newKey + " " + newValue
			changed = true
		}
	}
	if !changed {
		return text
	}
	return strings.Join(lines, "\n")
}

// textLines splits text into lines without the empty one after a final newline.
func textLines(text string) []string {
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

func isPool(name string) bool { return strings.HasPrefix(name, PoolPrefix) }

func hasServers(s *config.Section) bool {
	for _, d := range s.Directives {
		if d.Keyword == "server" {
			return true
		}
	}
	return false
}

// signature is everything about a backend but its name and servers.
func signature(s *config.Section, inherit map[*config.Section]string) string {
	var b strings.Builder
	b.WriteString(config.JoinWords(s.Args[1:]))
	b.WriteString("\x00")
	b.WriteString(inherit[s])
	for _, d := range s.Directives {
		if d.Keyword != "server" {
			b.WriteString("\x00")
			b.WriteString(d.String())
		}
	}
	return b.String()
}

// backendsByName indexes backend sections; a repeated name keeps the first (HAProxy
// refuses such a config anyway).
func backendsByName(c *config.Config) map[string]*config.Section {
	m := map[string]*config.Section{}
	for _, s := range c.Sections {
		if s.Keyword == "backend" && s.Name != "" && m[s.Name] == nil {
			m[s.Name] = s
		}
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
