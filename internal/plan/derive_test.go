package plan

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// TestDerivedPlansAsWholeParses: over chains of random changes as routes bring them —
// a backend added (into a pool slot) with its map line, one taken out, a server or a
// directive edited, a frontend added, taken out or moved, several at once — plans made with parses and layouts derived
// from the last ones (config.Reparsed, layout.derived) and translations spliced from
// the last ones are the plans of whole parses, layouts and translations: the same
// operations, reasons, files, running set and aliases. Each chain runs until the
// pool slots are taken, reloads, and goes on from what the reload runs.
func TestDerivedPlansAsWholeParses(t *testing.T) {
	defer func(p *configParses, tr *mapTranslations, on bool, split int) {
		parsedConfigs, translatedMaps, derivedParses, splitEditsFrom = p, tr, on, split
	}(parsedConfigs, translatedMaps, derivedParses, splitEditsFrom)
	rng := rand.New(rand.NewPCG(31, 32))
	kept, keptMaps := &configParses{}, &mapTranslations{byName: map[string][]*translation{}}
	planOf := func(running Running, desired *bundle.Bundle, derived bool) (Result, string) {
		parsedConfigs, translatedMaps = &configParses{}, &mapTranslations{byName: map[string][]*translation{}}
		if derived {
			parsedConfigs, translatedMaps = kept, keptMaps
		}
		derivedParses = derived
		return planned(t, running, desired)
	}
	runtimePlans, reloads := 0, 0
	for chain := range 6 {
		splitEditsFrom = 64 << 10 * (chain % 2) // (every edit looked into in half the chains)
		backends := map[string][]string{}       // name → its lines after the header
		for b := range 30 + rng.IntN(60) {
			backends[fmt.Sprintf("be_%04d", 10*b)] = plainBackend(rng, b)
		}
		running := Running{Bundle: routeBundle(backends)}
		for step := range 80 {
			next := maps2(backends)
			for range 1 + rng.IntN(2) {
				names := slices.DeleteFunc(sortedKeys(next), func(n string) bool { return strings.HasPrefix(n, "!") })
				name := names[rng.IntN(len(names))]
				switch k := rng.IntN(10); {
				case k < 5: // a route and its backend added, amid the others
					next[fmt.Sprintf("be_%04d_%d", 10*rng.IntN(len(names)+20), step)] = plainBackend(rng, step)
				case k < 7: // a route taken out
					delete(next, name)
				case k < 9: // a server moved
					lines := slices.Clone(next[name])
					lines[len(lines)-1] = fmt.Sprintf("    server s9 10.9.%d.%d:80", step%250, rng.IntN(250))
					next[name] = lines
				case k < 9: // a directive changed
					next[name] = append([]string{"    balance leastconn"}, next[name][1:]...)
				case next[extraFrontend] == nil: // a section other than a backend added
					next[extraFrontend] = []string{"    bind :81"}
				case rng.IntN(2) == 0: // ... or taken out
					delete(next, extraFrontend)
				default: // ... or moved after the backends, or back
					next[extraLate] = []string{}
					if rng.IntN(2) == 0 {
						delete(next, extraLate)
					}
				}
			}
			desired := routeBundle(next)
			samePlacement(t, running, desired)
			slow, slowText := planOf(running, desired, false)
			_, fastText := planOf(running, desired, true)
			if slowText != fastText {
				t.Fatalf("chain %d step %d: plans differ\nwhole: %s\nderived: %s", chain, step, slowText, fastText)
			}
			backends = next
			if slow.Running != nil {
				running = *slow.Running
				runtimePlans++
			} else {
				running = Running{Bundle: desired} // (the pods reloaded)
				reloads++
			}
		}
	}
	if runtimePlans < 200 || reloads < 10 {
		t.Fatalf("%d plans at run time, %d reloads: the chains do not reach the pool and past it", runtimePlans, reloads)
	}
}

// samePlacement fails t when place and placeByPasses place desired differently.
func samePlacement(t *testing.T, running Running, desired *bundle.Bundle) {
	t.Helper()
	runText, wantText := running.Bundle.Config().Content.String(), desired.Config().Content.String()
	run, err := config.Parse(runText)
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.Parse(wantText)
	if err != nil {
		t.Fatal(err)
	}
	got, ref := place(run, runText, want, wantText, running.Aliases), placeByPasses(run, runText, want, wantText, running.Aliases)
	if got.text != ref.text || !maps.Equal(got.aliases, ref.aliases) {
		t.Fatalf("placement %v differs from %v", got.aliases, ref.aliases)
	}
}

// The names routeBundle takes for a frontend of its own (its lines), and for
// putting it after the backends.
const extraFrontend, extraLate = "!frontend", "!late"

// plainBackend is a backend's lines after its header: a plain backend (one pool
// slots take) but for one in five.
func plainBackend(rng *rand.Rand, b int) []string {
	lines := []string{"    balance roundrobin"}
	if b%5 == 0 {
		lines = append(lines, "    timeout server 9s")
	}
	for s := range 1 + rng.IntN(2) {
		lines = append(lines, fmt.Sprintf("    server s%d 10.%d.%d.%d:80", s, b/250%250, b%250, s))
	}
	return lines
}

// routeBundle is a configuration of backends, sorted, some inheriting from named
// defaults, and four pool slots after them, with a map naming every backend.
func routeBundle(backends map[string][]string) *bundle.Bundle {
	cfg := []string{"global", "    maxconn 100", "defaults", "    mode http", "defaults tuned", "    mode http",
		"    timeout client 5s", "defaults", "    mode http", "frontend fe", "    bind :80",
		"    use_backend %[path,map_beg(/etc/haproxy/maps/path.map)]"}
	extra := func(late bool) {
		if lines, ok := backends[extraFrontend]; ok && (backends[extraLate] != nil) == late {
			cfg = append(append(cfg, "", "frontend fe_extra"), lines...)
		}
	}
	extra(false)
	var routes []string
	for _, name := range sortedKeys(backends) {
		if strings.HasPrefix(name, "!") {
			continue
		}
		header := "backend " + name
		if strings.HasSuffix(name, "30") { // (one in ten of the first ones: pool slots do not take them)
			header += " from tuned"
		}
		cfg = append(append(cfg, "", header), backends[name]...)
		routes = append(routes, "/"+name+" "+name)
	}
	for i := range 4 {
		cfg = append(cfg, "", fmt.Sprintf("backend %s%03d", PoolPrefix, i), "    balance roundrobin")
	}
	extra(true)
	sort.Strings(routes)
	return bundleOf(strings.Join(cfg, "\n")+"\n", "map:path.map", strings.Join(routes, "\n")+"\n")
}

func maps2(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// placeByPasses is place as it was made before it read the sorted names (a pass over
// every backend of both sides, the desired text copied line by line): the placement
// place must give.
func placeByPasses(run *config.Config, runText string, want *config.Config, wantText string, previous map[string]string) placement {
	rl, wl := layoutOf(run), layoutOf(want)
	byName := func(l *layout) map[string]*config.Section {
		m := map[string]*config.Section{}
		for _, n := range l.names {
			m[n] = l.backends.get(n)
		}
		return m
	}
	runB, wantB := byName(rl), byName(wl)
	runInherit, wantInherit := rl.inherit.get, wl.inherit.get

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
	writeSectionsByLines(&b, want, wantText, placedName(aliases, drop))
	writeRetired(&b, run, runText, retired)
	return placement{text: b.String(), aliases: aliases}
}

// writeSectionsByLines is writeSections line by line.
func writeSectionsByLines(b *strings.Builder, c *config.Config, text string, keep func(*config.Section) (rename string, ok bool)) {
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
