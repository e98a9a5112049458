package plan

import (
	"maps"
	"slices"
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
	runB, wantB := rl.backends.get, wl.backends.get
	runInherit, wantInherit := rl.inherit.get, wl.inherit.get
	// (from the sorted names, not a pass over every backend's: a change brings a few)
	onlyRun, onlyWant := sortedDifference(rl.names, wl.names)

	aliases := map[string]string{}
	served := map[string]bool{} // running names that serve a renamed desired backend
	for _, d := range sortedKeys(previous) {
		r := previous[d]
		if wantB(d) == nil || runB(r) == nil || runB(d) != nil || served[r] || (wantB(r) != nil && !isPool(r)) {
			continue
		}
		aliases[d], served[r] = r, true
	}
	// A running name is taken when it serves a desired backend: its own (a desired
	// backend that runs under its name is never renamed), or one renamed to it.
	taken := func(r string) bool { return served[r] || !isPool(r) && wantB(r) != nil && runB(r) != nil }

	spares := slices.Concat(withPrefix(rl.names, PoolPrefix), onlyRun)
	spares = slices.DeleteFunc(spares, taken)
	sort.Slice(spares, func(i, j int) bool {
		if isPool(spares[i]) != isPool(spares[j]) {
			return isPool(spares[i])
		}
		return spares[i] < spares[j]
	})
	for _, d := range onlyWant {
		if isPool(d) {
			continue
		}
		if _, renamed := aliases[d]; renamed {
			continue
		}
		sig := signature(wantB(d), wantInherit)
		for _, r := range spares {
			if !served[r] && !hasServers(runB(r)) && signature(runB(r), runInherit) == sig {
				aliases[d], served[r] = r, true
				break
			}
		}
	}

	// Desired pool backends are dropped when their name is in use or they are not
	// running; running backends nobody claims are kept, without servers.
	drop := map[string]bool{}
	for _, name := range withPrefix(wl.names, PoolPrefix) {
		if taken(name) || runB(name) == nil {
			drop[name] = true
		}
	}
	var retired []int // run's sections
	if names := retiring(onlyRun, drop, taken); len(names) > 0 {
		for i, s := range run.Sections {
			if s.Keyword == "backend" && names[s.Name] {
				retired = append(retired, i)
			}
		}
	}
	if len(aliases) == 0 && len(drop) == 0 && len(retired) == 0 {
		return placement{text: wantText}
	}
	var b strings.Builder
	b.Grow(len(wantText))
	writeSections(&b, want, wantText, placedName(aliases, drop))
	writeRetired(&b, run, runText, retired)
	return placement{text: b.String(), aliases: aliases}
}

// placedName is writeSections' keep of a placement: a backend renamed to the running
// backend that serves it, a desired pool backend dropped.
func placedName(aliases map[string]string, drop map[string]bool) func(*config.Section) (string, bool) {
	return func(s *config.Section) (string, bool) {
		if s.Keyword != "backend" {
			return "", true
		}
		if r, ok := aliases[s.Name]; ok {
			return r, true
		}
		return "", !drop[s.Name]
	}
}

// writeRetired writes run's sections retired, without their servers.
func writeRetired(b *strings.Builder, run *config.Config, runText string, retired []int) {
	if len(retired) == 0 {
		return
	}
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
}

// retiring is the running backends nobody claims (see place): those the desired
// configuration does not have, and the desired pool backends dropped, untaken.
func retiring(onlyRun []string, drop map[string]bool, taken func(string) bool) map[string]bool {
	names := map[string]bool{}
	for _, n := range onlyRun {
		names[n] = !taken(n)
	}
	for n := range drop {
		names[n] = !taken(n)
	}
	maps.DeleteFunc(names, func(_ string, retires bool) bool { return !retires })
	return names
}

// sortedDifference is the strings of sorted a not in sorted b, and those of b not
// in a.
func sortedDifference(a, b []string) (onlyA, onlyB []string) {
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] == b[0]:
			a, b = a[1:], b[1:]
		case a[0] < b[0]:
			onlyA, a = append(onlyA, a[0]), a[1:]
		default:
			onlyB, b = append(onlyB, b[0]), b[1:]
		}
	}
	return append(onlyA, a...), append(onlyB, b...)
}

// withPrefix is the strings of sorted names that start with prefix.
func withPrefix(names []string, prefix string) []string {
	i := sort.SearchStrings(names, prefix)
	j := i
	for j < len(names) && strings.HasPrefix(names[j], prefix) {
		j++
	}
	return names[i:j]
}

// writeSections copies text section by section; keep says whether a section stays
// and, for a backend, the name it is renamed to ("" keeps its name). The sections
// that stay as they are are copied in runs, as text.
func writeSections(b *strings.Builder, c *config.Config, text string, keep func(*config.Section) (rename string, ok bool)) {
	lines := lineFinder{text: text, line: 1}
	pending := 0 // where the text not written yet starts: a run of sections that stay
	for i, s := range c.Sections {
		if s.Keyword == "" {
			continue
		}
		rename, ok := keep(s)
		if ok && rename == "" {
			continue
		}
		start := lines.start(c.SectionLine(i))
		end := len(text)
		if i+1 < len(c.Sections) {
			end = lines.start(c.SectionLine(i + 1))
		}
		b.WriteString(text[pending:start])
		pending = end
		if !ok {
			continue
		}
		header := end
		if n := strings.IndexByte(text[start:end], '\n'); n >= 0 {
			header = start + n + 1
		}
		b.WriteString(config.JoinWords(append([]string{s.Keyword, rename}, s.Args[1:]...)))
		b.WriteByte('\n')
		b.WriteString(text[header:end])
	}
	b.WriteString(text[pending:])
	if str := b.String(); str != "" && !strings.HasSuffix(str, "\n") {
		b.WriteByte('\n') // (every line written ends with one)
	}
}

// lineFinder finds where lines start in a text, walking on from the last line found.
type lineFinder struct {
	text string
	line int // at is on this line
	at   int
}

// lineBlock is how much text start counts the newlines of at once.
const lineBlock = 4096

// start is the offset line n starts at (len(text) past the last line); n is not
// before the last line found.
func (f *lineFinder) start(n int) int {
	for need := n - f.line; need > 0; {
		rest := f.text[f.at:]
		if len(rest) > lineBlock {
			if c := strings.Count(rest[:lineBlock], "\n"); c < need {
				f.at, f.line, need = f.at+lineBlock, f.line+c, need-c
				continue
			}
		}
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			f.at, f.line = len(f.text), n
			break
		}
		f.at, f.line, need = f.at+i+1, f.line+1, need-1
	}
	return f.at
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
func signature(s *config.Section, inherit func(*config.Section) string) string {
	var b strings.Builder
	b.WriteString(config.JoinWords(s.Args[1:]))
	b.WriteString("\x00")
	b.WriteString(inherit(s))
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
