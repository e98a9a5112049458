package agent

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// touched is what a list of operations changed: per backend the servers (true when
// an operation set the server's weight), and the maps by bundle name.
type touched struct {
	servers map[string]map[string]bool // backend → server → weight set
	maps    map[string]bool
	// keys are the map keys single-entry operations touched, by map; replaced
	// maps were rewritten whole.
	keys     map[string]map[string]bool
	replaced map[string]bool
}

func touchedBy(ops []runtime.Op) touched {
	t := touched{servers: map[string]map[string]bool{}, maps: map[string]bool{}, keys: map[string]map[string]bool{}, replaced: map[string]bool{}}
	key := func(m, k string) {
		t.maps[m] = true
		if t.keys[m] == nil {
			t.keys[m] = map[string]bool{}
		}
		t.keys[m][k] = true
	}
	set := func(be, srv string, weight bool) {
		if t.servers[be] == nil {
			t.servers[be] = map[string]bool{}
		}
		t.servers[be][srv] = t.servers[be][srv] || weight
	}
	for _, op := range ops {
		switch o := op.Operation.(type) {
		case *runtime.SetMap:
			key(o.Map, o.Key)
		case *runtime.AddMap:
			key(o.Map, o.Key)
		case *runtime.DelMap:
			key(o.Map, o.Key)
		case *runtime.ReplaceMap:
			t.maps[o.Map] = true
			t.replaced[o.Map] = true
		case *runtime.AddServer:
			set(o.Backend, o.Server, o.Weight > 0)
		case *runtime.DelServer:
			set(o.Backend, o.Server, false)
		case *runtime.SetServerAddr:
			set(o.Backend, o.Server, false)
		case *runtime.SetServerState:
			set(o.Backend, o.Server, false)
		case *runtime.SetServerWeight:
			set(o.Backend, o.Server, true)
		}
	}
	return t
}

// cfgServer is a server line of the configuration, as far as the read-back needs it.
type cfgServer struct {
	address  string // "" when the line has no IP:port (a name, a prefix, a range)
	port     int
	weight   int  // 1 unless the line sets it (default-server is not followed)
	weighted bool // the line sets the weight
	disabled bool
}

// configServers reads the server lines of the backend and listen sections of a
// configuration (config.Config.Servers): backend → server → line, and the sections
// with a server-template line (their servers have generated names). A configuration
// that does not parse is an error: nothing can be compared with it.
func configServers(text string) (servers map[string]map[string]cfgServer, templated map[string]bool, err error) {
	out := map[string]map[string]cfgServer{}
	cfg, err := config.Parse(text)
	if err != nil {
		return nil, nil, err
	}
	lines, templated := cfg.Servers()
	for be, byName := range lines {
		out[be] = make(map[string]cfgServer, len(byName))
		for name, line := range byName {
			s := cfgServer{weight: 1, disabled: line.Disabled()}
			if host, port, err := line.IPPort(); err == nil {
				s.address, s.port = host, port
			}
			if w, set, err := line.Weight(); set && err == nil {
				s.weight, s.weighted = w, true
			}
			out[be][name] = s
		}
	}
	return out, templated, nil
}

// proxiesServers is configServers(text) for the proxies named: each one's section is
// found by its header line and parsed alone, so that an endpoint's server read back
// does not parse a configuration of thousands of backends; the whole text is parsed
// when a section is not found so (no header line, or more than one, for the name;
// preprocessor lines in it).
func proxiesServers(text bundle.Text, names []string) (map[string]map[string]cfgServer, error) {
	out := make(map[string]map[string]cfgServer, len(names))
	for _, name := range names {
		section, ok := proxySection(text, name)
		if ok {
			servers, _, err := configServers(section)
			if err == nil {
				out[name] = servers[name]
				continue
			}
		}
		all, _, err := configServers(text.String())
		return all, err
	}
	return out, nil
}

// proxySection is the text of the one backend or listen section of text named name:
// from its header line to the next line that starts a section.
func proxySection(text bundle.Text, name string) (string, bool) {
	from, to, found := 0, 0, 0
	for at := 0; ; {
		i := text.Index(at, name)
		if i < 0 {
			break
		}
		start := text.LastIndexByte(i, '\n') + 1
		end := text.IndexByte(i, '\n')
		if end < 0 {
			end = text.Len()
		}
		at = end
		words, err := config.Words(text.Slice(start, end))
		if err != nil || len(words) < 2 || words[1] != name || !config.IsSectionKeyword(words[0]) {
			continue
		}
		if !config.IsProxyKeyword(words[0]) {
			continue // (a frontend of the name holds no servers)
		}
		if found++; found > 1 {
			return "", false
		}
		from, to = start, config.SectionEnd(text, min(end+1, text.Len()))
		if to < text.Len() {
			lineEnd := text.IndexByte(to, '\n')
			if lineEnd < 0 {
				lineEnd = text.Len()
			}
			if config.IsPreprocessor(strings.TrimLeft(text.Slice(to, lineEnd), " \t")) {
				return "", false // (a preprocessor line: read with the rest)
			}
		}
	}
	if found != 1 {
		return "", false
	}
	return text.Slice(from, to), true
}

// union is the set of keys of a and b.
func union[A, B any](a map[string]A, b map[string]B) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// divergence is what a read-back found: one line per diverging server and per
// diverging map.
type divergence struct {
	servers []string
	maps    []string
}

func (d divergence) empty() bool { return len(d.servers) == 0 && len(d.maps) == 0 }

func (d divergence) String() string {
	return strings.Join(append(append([]string{}, d.servers...), d.maps...), "; ")
}

// readBack compares the running worker with set b for what ops touched. Every server
// an operation touched must run if and only if b's configuration has its server
// line, with the line's address and port (when the line has an IP address),
// maintenance state ("disabled" = maint; ready and drain are not maint) and weight
// (when the line sets it or an operation set it; 1 when not written). Every map key
// a single-entry operation touched must be looked up as b's map file says
// (keysReadBack: a lookup per key, so a route's apply does not dump its maps); a
// replaced map, or a key whose lookup does not match, has the whole map compared
// with the file as multisets (runtime.DiffMap). Entries no operation touched are
// the runtime verification's (VerifyRuntime, --verify-interval). Callers hold
// a.mu. An error means the worker could not be read.
func (a *Agent) readBack(ctx context.Context, ops []runtime.Op, b *bundle.Bundle) (divergence, error) {
	var d divergence
	t := touchedBy(ops)
	if len(t.servers) > 0 {
		cfg, err := proxiesServers(configOf(b), sortedKeys(t.servers))
		if err != nil {
			return d, fmt.Errorf("read back: %w", err)
		}
		for _, be := range sortedKeys(t.servers) {
			running, err := runtime.ShowServersState(ctx, a.admin, be)
			if err != nil {
				return d, fmt.Errorf("read back: %w", err)
			}
			byName := make(map[string]runtime.ServerState, len(running))
			for _, s := range running {
				byName[s.Server] = s
			}
			for _, name := range sortedKeys(t.servers[be]) {
				want, inCfg := cfg[be][name]
				got, running := byName[name]
				if msg := serverDiff(t.servers[be][name], want, inCfg, got, running); msg != "" {
					d.servers = append(d.servers, "server "+be+"/"+name+": "+msg)
				}
			}
		}
	}
	maps := mapFiles(b)
	lookups := map[string]map[string]bool{} // the keys to look up, by map
	for name := range t.maps {
		if _, ok := maps[name]; ok && !t.replaced[name] && len(t.keys[name]) > 0 {
			lookups[name] = t.keys[name]
		}
	}
	matched := a.keysReadBack(ctx, maps, lookups)
	for _, name := range sortedKeys(t.maps) {
		content, ok := maps[name]
		if !ok {
			continue // not a file of the set: nothing on disk to compare with
		}
		if matched[name] {
			continue
		}
		md, err := a.diffMap(ctx, name, content.String())
		if err != nil {
			return d, fmt.Errorf("read back: %w", err)
		}
		if !md.Empty() {
			d.maps = append(d.maps, "map "+name+": "+md.String())
		}
	}
	return d, nil
}

// serverDiff describes how a running server differs from its configuration line;
// weight is compared when the line sets it or weightSet; "" when nothing differs.
func serverDiff(weightSet bool, want cfgServer, inCfg bool, got runtime.ServerState, running bool) string {
	switch {
	case !inCfg && running:
		return "running but not in the configuration"
	case inCfg && !running:
		return "in the configuration but not running"
	case !inCfg:
		return ""
	}
	var diffs []string
	if want.address != "" && (!sameIP(got.Address, want.address) || got.Port != want.port) {
		diffs = append(diffs, fmt.Sprintf("address %s, want %s",
			net.JoinHostPort(got.Address, strconv.Itoa(got.Port)), net.JoinHostPort(want.address, strconv.Itoa(want.port))))
	}
	if (weightSet || want.weighted) && got.Weight != want.weight {
		diffs = append(diffs, fmt.Sprintf("weight %d, want %d", got.Weight, want.weight))
	}
	if got.Maint() != want.disabled {
		state := map[bool]string{true: "maint", false: "ready"}
		diffs = append(diffs, fmt.Sprintf("state %s, want %s", state[got.Maint()], state[want.disabled]))
	}
	return strings.Join(diffs, ", ")
}

func sameIP(a, b string) bool {
	ia, ib := net.ParseIP(a), net.ParseIP(b)
	return ia != nil && ia.Equal(ib)
}

// keysReadBack returns the maps whose keys (lookups: by map, the keys single-entry
// operations touched) the worker answers exactly as the map file (files: by name)
// says: `get map` finds the entry itself with the file's value, or finds nothing
// when the file lacks the key. It costs a lookup per key, all of them in one
// exchange, instead of a dump of each map; a map with an answer it cannot take as
// a match (another key matched first, a duplicate key in the file, an error) is
// left out, and the caller compares it whole.
func (a *Agent) keysReadBack(ctx context.Context, files map[string]bundle.Text, lookups map[string]map[string]bool) map[string]bool {
	type lookup struct{ name, key string }
	var asked []lookup
	var cmds []string
	want := map[string]map[string]string{} // by map: the file's value of each key it holds
	for _, name := range sortedKeys(lookups) {
		keys := lookups[name]
		values, dup := a.mapKeys.lookup(name, files[name], keys)
		if dup {
			continue
		}
		want[name] = values
		path := runtime.Escape(a.mapPath(name))
		for _, k := range sortedKeys(keys) {
			asked = append(asked, lookup{name, k})
			cmds = append(cmds, "get map "+path+" "+runtime.Escape(k))
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	replies, err := runtime.DoEach(ctx, a.admin, cmds)
	if err != nil {
		return nil
	}
	matched := make(map[string]bool, len(want))
	for name := range want {
		matched[name] = true
	}
	for i, l := range asked {
		line := replies[i]
		v, present := want[l.name][l.key]
		switch {
		case !strings.HasPrefix(line, "type="),
			present && !(strings.Contains(line, ", found=yes, ") &&
				strings.Contains(line, `, key="`+l.key+`", value="`+v+`", type="`)),
			!present && !strings.HasSuffix(line, ", found=no"):
			matched[l.name] = false
		}
	}
	return matched
}

// diffMap compares a map file's content with what the worker holds for it.
func (a *Agent) diffMap(ctx context.Context, name, content string) (runtime.MapDiff, error) {
	running, err := runtime.ShowMap(ctx, a.admin, a.mapPath(name))
	if err != nil {
		return runtime.MapDiff{}, err
	}
	return runtime.DiffMap(runtime.ParseMapFile(content), running), nil
}

func (a *Agent) mapPath(name string) string { return filepath.Join(a.opts.Layout.MapsDir, name) }

func configOf(b *bundle.Bundle) bundle.Text {
	for _, f := range b.Files {
		if f.Kind == bundle.KindConfig {
			return f.Content
		}
	}
	return bundle.Text{}
}

func mapFiles(b *bundle.Bundle) map[string]bundle.Text {
	out := map[string]bundle.Text{}
	for _, f := range b.Files {
		if f.Kind == bundle.KindMap {
			out[f.Name] = f.Content
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
