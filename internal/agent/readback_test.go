package agent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/bundle/bundletest"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// rbCfg is mapCfg with the given server lines in be_dyn.
func rbCfg(port int, mapsDir, servers string) bundle.File {
	cfg := mapCfg(port, mapsDir)
	return configFile(strings.Replace(cfg, "balance roundrobin\n", "balance roundrobin\n"+servers, 1))
}

// worker sends a command straight to the worker's admin socket, behind the agent's
// back.
func worker(t *testing.T, a *Agent, cmd string) string {
	t.Helper()
	out, err := a.admin.Do(context.Background(), cmd)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return out
}

// runningMap is the worker's host.map.
func runningMap(t *testing.T, a *Agent) []runtime.MapEntry {
	t.Helper()
	got, err := runtime.ShowMap(context.Background(), a.admin, a.mapPath("host.map"))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// assertMapIsDisk: the worker's host.map holds the file's entries.
// assertMapIsDisk: host.map on disk is what the worker runs, at the latest once
// a runtime apply's files are written (fileWriteDelay).
func assertMapIsDisk(t *testing.T, a *Agent) {
	t.Helper()
	deadline := time.Now().Add(fileWriteDelay + 2*time.Second)
	for {
		disk := readFile(t, a.mapPath("host.map"))
		d := runtime.DiffMap(runtime.ParseMapFile(disk), runningMap(t, a))
		if d.Empty() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("running host.map differs from disk: %s", d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func runningServer(t *testing.T, a *Agent, be, name string) (runtime.ServerState, bool) {
	t.Helper()
	servers, err := runtime.ShowServersState(context.Background(), a.admin, be)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if s.Server == name {
			return s, true
		}
	}
	return runtime.ServerState{}, false
}

// TestRuntimeReadBack drives runtime operations against a real HAProxy: clean ones
// read back with zero divergence; divergence injected straight into the worker (or
// operations that contradict the files) is detected by the read-back, counted and
// corrected with a verified reload.
func TestRuntimeReadBack(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	a, srv := startAgent(t, opts)
	port := freePort(t)
	mapsDir := opts.Layout.MapsDir
	cfg := rbCfg(port, mapsDir, "")
	hostMap := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("a.test be_a\n")}
	if code, res := putConfig(t, srv, cfg, hostMap); code != http.StatusOK {
		t.Fatalf("base config: %d %+v", code, res)
	}
	cur := []bundle.File{cfg, hostMap}
	// post applies ops with the resulting files (cur with files replaced).
	post := func(files []bundle.File, ops ...runtime.Operation) (int, agentapi.Result) {
		t.Helper()
		next := merged(bundle.New(cur), files)
		req := agentapi.RuntimeRequest{Files: files, Hash: next.Hash}
		for _, o := range ops {
			req.Operations = append(req.Operations, runtime.Op{Operation: o})
		}
		code, res := call(t, srv, http.MethodPost, "/v1/runtime", testUser, testPass, req)
		if code == http.StatusOK {
			cur = next.Files
		}
		return code, res
	}
	before := getState(t, srv)

	t.Run("clean operations read back with zero divergence", func(t *testing.T) {
		cfg2 := rbCfg(port, mapsDir, "    server s1 127.0.0.1:9 weight 5\n    server s2 127.0.0.1:10 disabled\n")
		map2 := hostMap
		map2.Content = bundle.TextOf("a.test be_a\nb.test be_dyn\n# comment\n  c.test   be_b\n")
		code, res := post([]bundle.File{cfg2, map2},
			&runtime.AddServer{Backend: "be_dyn", Server: "s1", Address: "127.0.0.1", Port: 9, Weight: 5},
			&runtime.AddServer{Backend: "be_dyn", Server: "s2", Address: "127.0.0.1", Port: 10, Disabled: true},
			&runtime.AddMap{Map: "host.map", Key: "b.test", Value: "be_dyn"},
			&runtime.AddMap{Map: "host.map", Key: "c.test", Value: "be_b"},
		)
		if code != http.StatusOK || res.Result != agentapi.ResultApplied || res.Reloaded || res.ServerDivergence != 0 || res.MapDivergence != 0 {
			t.Fatalf("clean ops: %d %+v", code, res)
		}
		cfg3 := rbCfg(port, mapsDir, "    server s1 127.0.0.2:19 weight 7\n    server s2 127.0.0.1:10\n")
		map3 := map2
		map3.Content = bundle.TextOf("b.test be_a\nc.test be_b\n")
		code, res = post([]bundle.File{cfg3, map3},
			&runtime.SetServerAddr{Backend: "be_dyn", Server: "s1", Address: "127.0.0.2", Port: 19},
			&runtime.SetServerWeight{Backend: "be_dyn", Server: "s1", Weight: 7},
			&runtime.SetServerState{Backend: "be_dyn", Server: "s2", State: "ready"},
			&runtime.DelMap{Map: "host.map", Key: "a.test"},
			&runtime.SetMap{Map: "host.map", Key: "b.test", Value: "be_a"},
		)
		if code != http.StatusOK || res.Result != agentapi.ResultApplied || res.Reloaded || res.ServerDivergence != 0 || res.MapDivergence != 0 {
			t.Fatalf("clean ops: %d %+v", code, res)
		}
		if got := fetch(t, port, "c.test"); got != "B" {
			t.Fatalf("c.test: %q", got)
		}
		st := getState(t, srv)
		if st.Reloads != before.Reloads || st.ServerDivergence != 0 || st.MapDivergence != 0 {
			t.Fatalf("state: %+v", st)
		}
		assertMapIsDisk(t, a)
	})

	t.Run("server changed behind the agent's back is detected and reloaded", func(t *testing.T) {
		st0 := getState(t, srv)
		worker(t, a, "set server be_dyn/s1 state maint")
		cfg4 := rbCfg(port, mapsDir, "    server s1 127.0.0.2:19 weight 8\n    server s2 127.0.0.1:10\n")
		code, res := post([]bundle.File{cfg4}, &runtime.SetServerWeight{Backend: "be_dyn", Server: "s1", Weight: 8})
		if code != http.StatusOK || res.Result != agentapi.ResultRuntimeFallback || !res.Reloaded || res.ServerDivergence != 1 ||
			res.MapDivergence != 0 || !strings.Contains(res.Error, "server be_dyn/s1: state maint, want ready") {
			t.Fatalf("maint divergence: %d %+v", code, res)
		}
		want := map[string]string{"s1": "127.0.0.2:19 w8 ready", "s2": "127.0.0.1:10 w1 ready"}
		assertServers := func() {
			t.Helper()
			for name, w := range want {
				s, ok := runningServer(t, a, "be_dyn", name)
				state := map[bool]string{true: "maint", false: "ready"}[s.Maint()]
				if got := fmt.Sprintf("%s:%d w%d %s", s.Address, s.Port, s.Weight, state); !ok || got != w {
					t.Fatalf("%s after reload: %s, want %s", name, got, w)
				}
			}
		}
		assertServers()
		st := getState(t, srv)
		if st.ServerDivergence != st0.ServerDivergence+1 || st.Reloads != st0.Reloads+1 || st.TreeHash != st.Hash || st.Hash != bundle.New(cur).Hash {
			t.Fatalf("state: %+v", st)
		}

		// Two servers at once: an address changed behind the agent's back, and an
		// added server the files do not have.
		worker(t, a, "set server be_dyn/s2 addr 127.0.0.3 port 11")
		code, res = post(nil, &runtime.SetServerWeight{Backend: "be_dyn", Server: "s2", Weight: 1},
			&runtime.AddServer{Backend: "be_dyn", Server: "s3", Address: "127.0.0.1", Port: 12})
		if code != http.StatusOK || res.Result != agentapi.ResultRuntimeFallback || res.ServerDivergence != 2 ||
			!strings.Contains(res.Error, "be_dyn/s2: address 127.0.0.3:11, want 127.0.0.1:10") ||
			!strings.Contains(res.Error, "be_dyn/s3: running but not in the configuration") {
			t.Fatalf("two divergences: %d %+v", code, res)
		}
		if _, ok := runningServer(t, a, "be_dyn", "s3"); ok {
			t.Fatal("s3 still runs after the reload")
		}
		assertServers()

		// An operation that contradicts the files it comes with.
		code, res = post(nil, &runtime.SetServerWeight{Backend: "be_dyn", Server: "s1", Weight: 9})
		if code != http.StatusOK || res.ServerDivergence != 1 || !strings.Contains(res.Error, "weight 9, want 8") {
			t.Fatalf("contradicting op: %d %+v", code, res)
		}
		assertServers()
		if st := getState(t, srv); st.ServerDivergence != st0.ServerDivergence+4 || st.Reloads != st0.Reloads+3 {
			t.Fatalf("state: %+v", st)
		}
	})

	t.Run("map changed behind the agent's back is detected and reloaded", func(t *testing.T) {
		st0 := getState(t, srv)
		// The key the operation adds already runs with another value: the key's
		// lookup differs, so the whole map is compared.
		worker(t, a, "del map "+a.mapPath("host.map")+" c.test")
		worker(t, a, "add map "+a.mapPath("host.map")+" d.test be_a")
		map5 := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("b.test be_a\nc.test be_b\nd.test be_dyn\n")}
		code, res := post([]bundle.File{map5}, &runtime.AddMap{Map: "host.map", Key: "d.test", Value: "be_dyn"})
		if code != http.StatusOK || res.Result != agentapi.ResultRuntimeFallback || !res.Reloaded || res.MapDivergence != 1 || res.ServerDivergence != 0 ||
			!strings.Contains(res.Error, "1 missing (c.test be_b), 1 extra (d.test be_a)") {
			t.Fatalf("map divergence: %d %+v", code, res)
		}
		assertMapIsDisk(t, a)
		if got := fetch(t, port, "c.test"); got != "B" {
			t.Fatalf("c.test after reload: %q", got)
		}
		st := getState(t, srv)
		if st.MapDivergence != st0.MapDivergence+1 || st.Reloads != st0.Reloads+1 || st.TreeHash != st.Hash || st.Hash != bundle.New(cur).Hash {
			t.Fatalf("state: %+v", st)
		}
	})

	t.Run("an entry no operation touched is the runtime verification's", func(t *testing.T) {
		st0 := getState(t, srv)
		worker(t, a, "del map "+a.mapPath("host.map")+" b.test")
		map6 := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("b.test be_a\nc.test be_b\nd.test be_dyn\ne.test be_b\n")}
		code, res := post([]bundle.File{map6}, &runtime.AddMap{Map: "host.map", Key: "e.test", Value: "be_b"})
		if code != http.StatusOK || res.Result != agentapi.ResultApplied || res.Reloaded || res.MapDivergence != 0 {
			t.Fatalf("apply touching e.test only: %d %+v", code, res)
		}
		v := verifyState(t, srv)
		if v.LastVerify == nil || v.LastVerify.MapDivergence != 1 || v.MapDivergence != st0.MapDivergence+1 {
			t.Fatalf("verification after b.test went missing: %+v", v.LastVerify)
		}
		assertMapIsDisk(t, a)
		if got := fetch(t, port, "b.test"); got != "A" {
			t.Fatalf("b.test after the verification: %q", got)
		}
	})
}

// TestRuntimeVerifyServers: the runtime verification compares every running server
// with haproxy.cfg on disk; a server changed or added behind the agent's back is
// counted and the files are reloaded.
func TestRuntimeVerifyServers(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	a, srv := startAgent(t, opts)
	port := freePort(t)
	cfg := rbCfg(port, opts.Layout.MapsDir, "    server s1 127.0.0.1:10 weight 8\n    server s2 127.0.0.1:11\n")
	hostMap := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("a.test be_a\n")}
	if code, res := putConfig(t, srv, cfg, hostMap); code != http.StatusOK {
		t.Fatalf("config: %d %+v", code, res)
	}
	st0 := verifyState(t, srv)
	if v := st0.LastVerify; v == nil || v.Servers != 2 || v.ServerDivergence != 0 || v.Corrected != "" || v.Error != "" {
		t.Fatalf("clean verify: %+v", v)
	}

	worker(t, a, "set server be_dyn/s1 state maint")
	worker(t, a, "add server be_dyn/s9 127.0.0.1:19")
	st := verifyState(t, srv)
	v := st.LastVerify
	if v == nil || v.ServerDivergence != 2 || v.Corrected != "reload" || st.ServerDivergence != st0.ServerDivergence+2 ||
		st.Reloads != st0.Reloads+1 || !strings.Contains(strings.Join(v.Divergences, ";"), "be_dyn/s1: state maint, want ready") ||
		!strings.Contains(strings.Join(v.Divergences, ";"), "be_dyn/s9: running but not in the configuration") {
		t.Fatalf("verify after injection: %+v %+v", st, v)
	}
	if s1, ok := runningServer(t, a, "be_dyn", "s1"); !ok || s1.Maint() {
		t.Fatalf("s1 after the correction: %+v %v", s1, ok)
	}
	if _, ok := runningServer(t, a, "be_dyn", "s9"); ok {
		t.Fatal("s9 still runs after the correction")
	}
	if st := verifyState(t, srv); st.LastVerify.ServerDivergence != 0 || st.Reloads != st0.Reloads+1 {
		t.Fatalf("verify after the correction: %+v", st.LastVerify)
	}
}

// TestRuntimeVerify: GET /v1/state?verify=runtime compares every loaded map file
// with the worker and corrects a diverging map at runtime (no reload); the
// --verify-interval loop does the same on its own.
func TestRuntimeVerify(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	a, srv := startAgent(t, opts)
	port := freePort(t)
	cfg := configFile(mapCfg(port, opts.Layout.MapsDir))
	hostMap := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("a.test be_a\nb.test be_b\n")}
	unused := bundle.File{Kind: bundle.KindMap, Name: "unused.map", Content: bundle.TextOf("x y\n")} // not loaded by HAProxy
	if code, res := putConfig(t, srv, cfg, hostMap, unused); code != http.StatusOK {
		t.Fatalf("config: %d %+v", code, res)
	}
	verify := func() agentapi.State { t.Helper(); return verifyState(t, srv) }
	st0 := verify()
	if v := st0.LastVerify; v == nil || v.Maps != 1 || v.MapDivergence != 0 || v.Error != "" || st0.MapDivergence != 0 {
		t.Fatalf("clean verify: %+v", st0.LastVerify)
	}

	worker(t, a, "del map "+a.mapPath("host.map")+" a.test")
	worker(t, a, "set map "+a.mapPath("host.map")+" b.test be_a")
	if got := fetch(t, port, "a.test"); got != "nomatch" {
		t.Fatalf("injection did not take: %q", got)
	}
	if st := getState(t, srv); st.MapDivergence != 0 || st.LastVerify.At != st0.LastVerify.At {
		t.Fatalf("plain GET /v1/state verified: %+v", st)
	}
	st := verify()
	v := st.LastVerify
	if v == nil || v.MapDivergence != 1 || v.Corrected != "runtime" || st.MapDivergence != 1 || st.Reloads != st0.Reloads ||
		len(v.Divergences) != 1 || !strings.Contains(v.Divergences[0], "2 missing") {
		t.Fatalf("verify after injection: %+v %+v", st, v)
	}
	assertMapIsDisk(t, a)
	if got := fetch(t, port, "a.test") + fetch(t, port, "b.test"); got != "AB" {
		t.Fatalf("routing after correction: %q", got)
	}

	// The interval loop finds and corrects the next one.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.VerifyLoop(ctx, 50*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	worker(t, a, "add map "+a.mapPath("host.map")+" c.test be_b")
	deadline := time.Now().Add(5 * time.Second)
	for getState(t, srv).MapDivergence != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the verify loop did not count the divergence: %+v", getState(t, srv))
		}
		time.Sleep(25 * time.Millisecond)
	}
	assertMapIsDisk(t, a)

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/state?verify=servers", nil)
	req.SetBasicAuth(testUser, testPass)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("verify=servers: %s", resp.Status)
	}
}

// TestReadBackOfSeveralMaps: the keys a request touches in several maps are read
// back in one exchange, and only the map whose key the worker answers otherwise is
// compared whole, counted and named.
func TestReadBackOfSeveralMaps(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	a, _ := startAgent(t, opts)
	port := freePort(t)
	base := bundle.New(routeSet(port, 10, opts.Layout.MapsDir))
	if res, code := a.ApplyConfig(context.Background(), agentapi.ConfigRequest{Hash: base.Hash, Files: base.Files}); code != http.StatusOK {
		t.Fatalf("initial set: %d %+v", code, res)
	}
	apply := func(k int) agentapi.Result {
		t.Helper()
		cur := a.current
		host, path := fmt.Sprintf("%d-route.example.com", k), fmt.Sprintf("/%d/", k)
		files := []bundle.File{
			{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(mapContent(cur, "host.map") + host + " r" + strconv.Itoa(k) + "\n")},
			{Kind: bundle.KindMap, Name: "path-prefix.map", Content: bundle.TextOf(mapContent(cur, "path-prefix.map") + path + " be_" + strconv.Itoa(k) + "\n")},
		}
		res, code := a.ApplyRuntime(context.Background(), agentapi.RuntimeRequest{BaseHash: cur.Hash, Hash: merged(cur, files).Hash, Files: files,
			Operations: []runtime.Op{
				{Operation: &runtime.AddMap{Map: "host.map", Key: host, Value: "r" + strconv.Itoa(k)}},
				{Operation: &runtime.AddMap{Map: "path-prefix.map", Key: path, Value: "be_" + strconv.Itoa(k)}},
			}})
		if code != http.StatusOK {
			t.Fatalf("route %d: %d %+v", k, code, res)
		}
		return res
	}
	if res := apply(10); res.Result != agentapi.ResultApplied || res.Reloaded || res.MapDivergence != 0 {
		t.Fatalf("clean change of two maps: %+v", res)
	}
	// Behind the agent's back the worker already maps /11/ elsewhere: its lookup
	// answers that entry, not the file's.
	worker(t, a, "add map "+a.mapPath("path-prefix.map")+" /11/ be_elsewhere")
	res := apply(11)
	if res.Result != agentapi.ResultRuntimeFallback || !res.Reloaded || res.MapDivergence != 1 ||
		!strings.Contains(res.Error, "map path-prefix.map: ") || strings.Contains(res.Error, "map host.map") ||
		!strings.Contains(res.Error, "1 extra (/11/ be_elsewhere)") {
		t.Fatalf("one map of two diverging: %+v", res)
	}
}

// proxiesServers, which parses the named proxies' sections alone, reads the servers a
// parse of the whole configuration reads, over random configurations: names that
// are prefixes of others, a frontend of a proxy's name, indented headers, headers
// with arguments, comments naming proxies, preprocessor lines (read with the rest),
// a name with two proxies (read with the rest), texts in pieces.
func TestProxiesServersAreTheWholeParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	direct := 0
	for iter := range 300 {
		var b strings.Builder
		b.WriteString("global\n    maxconn 100\ndefaults\n    mode http\n")
		names := []string{}
		for i := range 3 + rng.IntN(30) {
			name := fmt.Sprintf("be_%d", i)
			names = append(names, name)
			if rng.IntN(8) == 0 {
				fmt.Fprintf(&b, "frontend %s\n    bind :%d\n", name, 8000+i)
			}
			if rng.IntN(10) == 0 {
				fmt.Fprintf(&b, "# backend %s is next\n", name)
			}
			kw := []string{"backend", "listen"}[rng.IntN(2)]
			indent := []string{"", "", "  "}[rng.IntN(3)]
			args := []string{"", "", " from defaults"}[rng.IntN(3)]
			fmt.Fprintf(&b, "%s%s %s%s\n    balance roundrobin\n", indent, kw, name, args)
			for s := range rng.IntN(4) {
				fmt.Fprintf(&b, "    server srv_%d 10.0.%d.%d:%d weight %d\n", s, i, s, 8080+s, 1+rng.IntN(5))
			}
			switch rng.IntN(20) {
			case 0:
				b.WriteString(".if defined(X)\n    server extra 10.9.9.9:80\n.endif\n")
			case 1:
				fmt.Fprintf(&b, "backend %s\n    server dup 10.8.8.8:80\n", name) // (two proxies of one name)
			}
		}
		text := b.String()
		want, _, err := configServers(text)
		if err != nil {
			t.Fatal(err)
		}
		asked := []string{names[rng.IntN(len(names))], names[rng.IntN(len(names))], "be_none"}
		if _, ok := proxySection(bundle.TextOf(text), asked[0]); ok {
			direct++
		}
		got, err := proxiesServers(bundletest.Cut(rng, text), asked)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range asked {
			if !reflect.DeepEqual(got[name], want[name]) {
				t.Fatalf("iteration %d: %s: servers %v, want %v\n%s", iter, name, got[name], want[name], text)
			}
		}
	}
	if direct < 200 {
		t.Fatalf("only %d of 300 proxies were found by their header", direct)
	}
}
