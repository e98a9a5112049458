package agent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

func mapCfg(port int, mapsDir string) string {
	return fmt.Sprintf(`global
    hard-stop-after 5s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:%d
    use_backend %%[req.hdr(host),lower,map(%s/host.map)]
    default_backend be_default
backend be_a
    http-request return status 200 content-type text/plain string "A"
backend be_b
    http-request return status 200 content-type text/plain string "B"
backend be_dyn
    balance roundrobin
backend be_default
    http-request return status 404 content-type text/plain string "nomatch"
`, port, mapsDir)
}

// TestAgentEndToEnd drives one agent and a real HAProxy through applies, a rejected
// config, a wrong credential, a reload that fails verification, runtime map
// operations, drift and a crash/restart.
func TestAgentEndToEnd(t *testing.T) {
	needHAProxy(t)
	dir := t.TempDir()
	opts := testOptions(t, dir)
	a, srv := startAgent(t, opts)
	port := freePort(t)

	// v1
	v1 := configFile(frontendCfg(port, "v1", "", ""))
	if code, res := putConfig(t, srv, v1); code != http.StatusOK || res.Result != agentapi.ResultApplied || !res.Reloaded {
		t.Fatalf("v1: %d %+v", code, res)
	}
	if got := fetch(t, port, ""); got != "v1" {
		t.Fatalf("v1 body %q", got)
	}
	st1 := getState(t, srv)

	// Same set again: no-op.
	if code, res := putConfig(t, srv, v1); code != http.StatusOK || res.Result != agentapi.ResultUnchanged || res.Reloaded {
		t.Fatalf("v1 again: %d %+v", code, res)
	}

	// v2: verified reload, new worker.
	v2 := configFile(frontendCfg(port, "v2", "", ""))
	code, res := putConfig(t, srv, v2)
	if code != http.StatusOK || res.Result != agentapi.ResultApplied || res.ReloadID != st1.Reloads+1 {
		t.Fatalf("v2: %d %+v (reloads before %d)", code, res, st1.Reloads)
	}
	if got := fetch(t, port, ""); got != "v2" {
		t.Fatalf("v2 body %q", got)
	}
	st2 := getState(t, srv)
	if st2.Reloads != st1.Reloads+1 || st2.Hash != bundle.New([]bundle.File{v2}).Hash || st2.TreeHash != st2.Hash {
		t.Fatalf("state after v2: %+v", st2)
	}
	if currentPID(t, st2) == currentPID(t, st1) {
		t.Fatalf("worker did not change: %+v -> %+v", st1.Workers, st2.Workers)
	}
	v2Disk := readFile(t, opts.Layout.ConfigFile)

	t.Run("invalid config is refused", func(t *testing.T) {
		bad := configFile(frontendCfg(port, "v3", "    bogus_keyword here\n", ""))
		code, res := putConfig(t, srv, bad)
		if code != http.StatusUnprocessableEntity || res.Result != agentapi.ResultInvalid || len(res.Alerts) == 0 ||
			!strings.Contains(strings.Join(res.Alerts, "\n"), "bogus_keyword") {
			t.Fatalf("invalid: %d %+v", code, res)
		}
		assertServing(t, a, srv, port, "v2", v2Disk, st2)
	})

	t.Run("wrong credential is refused", func(t *testing.T) {
		b := bundle.New([]bundle.File{configFile(frontendCfg(port, "v3", "", ""))})
		for _, cred := range [][2]string{{testUser, "wrong"}, {"other", testPass}, {"", ""}} {
			code, _ := call(t, srv, http.MethodPut, "/v1/config", cred[0], cred[1], agentapi.ConfigRequest{Hash: b.Hash, Files: b.Files})
			if code != http.StatusUnauthorized {
				t.Fatalf("credential %q: %d", cred[0], code)
			}
		}
		assertServing(t, a, srv, port, "v2", v2Disk, st2)
	})

	t.Run("hash mismatch is refused", func(t *testing.T) {
		f := configFile(frontendCfg(port, "v3", "", ""))
		code, _ := call(t, srv, http.MethodPut, "/v1/config", testUser, testPass, agentapi.ConfigRequest{Hash: "deadbeef", Files: []bundle.File{f}})
		if code != http.StatusBadRequest {
			t.Fatalf("hash mismatch: %d", code)
		}
	})

	t.Run("reload failing verification restores last known good", func(t *testing.T) {
		// Passes haproxy -c, fails at start: the port is taken.
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		extra := fmt.Sprintf("    bind %s\n", busy.Addr())
		code, res := putConfig(t, srv, configFile(frontendCfg(port, "v3", extra, "")))
		if code != http.StatusBadGateway || res.Result != agentapi.ResultRolledBack || res.Error == "" {
			t.Fatalf("rollback: %d %+v", code, res)
		}
		st := getState(t, srv)
		if st.LastApply == nil || st.LastApply.Result != agentapi.ResultRolledBack || st.FailedReloads != st2.FailedReloads+1 || st.Reloads != st2.Reloads+2 {
			t.Fatalf("state after rollback: %+v", st)
		}
		if got := fetch(t, port, ""); got != "v2" {
			t.Fatalf("after rollback body %q", got)
		}
		if st.Hash != st2.Hash || st.TreeHash != st2.Hash || readFile(t, opts.Layout.ConfigFile) != v2Disk {
			t.Fatalf("disk after rollback: hash %s tree %s", st.Hash, st.TreeHash)
		}
	})

	// Map routing, then runtime operations without reload.
	mapsDir := opts.Layout.MapsDir
	cfg := configFile(mapCfg(port, mapsDir))
	hostMap := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("a.test be_a\n")}
	if code, res := putConfig(t, srv, cfg, hostMap); code != http.StatusOK {
		t.Fatalf("map config: %d %+v", code, res)
	}
	if got := fetch(t, port, "a.test"); got != "A" {
		t.Fatalf("a.test: %q", got)
	}
	if got := fetch(t, port, "b.test"); got != "nomatch" {
		t.Fatalf("b.test before: %q", got)
	}
	stMap := getState(t, srv)

	t.Run("runtime map ops without reload", func(t *testing.T) {
		newMap := hostMap
		newMap.Content = bundle.TextOf("a.test be_a\nb.test be_b\n")
		next := bundle.New([]bundle.File{cfg, newMap})
		req := agentapi.RuntimeRequest{
			BaseHash:   stMap.Hash,
			Operations: []runtime.Op{{Operation: &runtime.AddMap{Map: "host.map", Key: "b.test", Value: "be_b"}}},
			Files:      []bundle.File{newMap},
			Hash:       next.Hash,
		}
		bad := req
		bad.Hash = stMap.Hash // the hash of the set before the change
		if code, _ := call(t, srv, http.MethodPost, "/v1/runtime", testUser, testPass, bad); code != http.StatusBadRequest {
			t.Fatalf("runtime hash mismatch: %d", code)
		}
		bad = req
		bad.BaseHash = "0123"
		if code, _ := call(t, srv, http.MethodPost, "/v1/runtime", testUser, testPass, bad); code != http.StatusConflict {
			t.Fatalf("runtime stale base: %d", code)
		}
		if code, _ := call(t, srv, http.MethodPost, "/v1/runtime", "x", "y", req); code != http.StatusUnauthorized {
			t.Fatalf("runtime wrong credential: %d", code)
		}
		if got := fetch(t, port, "b.test"); got != "nomatch" {
			t.Fatalf("refused runtime requests changed routing: %q", got)
		}
		code, res := call(t, srv, http.MethodPost, "/v1/runtime", testUser, testPass, req)
		if code != http.StatusOK || res.Result != agentapi.ResultApplied || res.Reloaded {
			t.Fatalf("runtime: %d %+v", code, res)
		}
		if got := fetch(t, port, "b.test"); got != "B" {
			t.Fatalf("b.test after add-map: %q", got)
		}
		st := getState(t, srv)
		if st.Reloads != stMap.Reloads || st.Hash != next.Hash || st.TreeHash != next.Hash || st.LastApply.Mode != "runtime" {
			t.Fatalf("state after runtime: %+v", st)
		}
		if readFile(t, filepath.Join(mapsDir, "host.map")) != newMap.Content.String() {
			t.Fatal("map file not written")
		}

		// A dynamic server, enabled, then routed to by a map entry.
		backend, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		bsrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("dyn")) })}
		go func() { _ = bsrv.Serve(backend) }()
		defer bsrv.Close()
		bport := backend.Addr().(*net.TCPAddr).Port
		map3 := newMap
		map3.Content = bundle.TextOf(map3.Content.String() + "c.test be_dyn\n")
		cfg3 := cfg
		cfg3.Content = bundle.TextOf(strings.Replace(cfg3.Content.String(), "balance roundrobin\n",
			fmt.Sprintf("balance roundrobin\n    server s1 127.0.0.1:%d\n", bport), 1))
		next3 := bundle.New([]bundle.File{cfg3, map3})
		code, res = call(t, srv, http.MethodPost, "/v1/runtime", testUser, testPass, agentapi.RuntimeRequest{
			Operations: []runtime.Op{
				{Operation: &runtime.AddServer{Backend: "be_dyn", Server: "s1", Address: "127.0.0.1", Port: bport}},
				{Operation: &runtime.AddMap{Map: "host.map", Key: "c.test", Value: "be_dyn"}},
			},
			Files: []bundle.File{cfg3, map3}, Hash: next3.Hash,
		})
		if code != http.StatusOK || res.Result != agentapi.ResultApplied || res.Reloaded {
			t.Fatalf("runtime server: %d %+v", code, res)
		}
		if got := fetch(t, port, "c.test"); got != "dyn" {
			t.Fatalf("c.test: %q", got)
		}

		// A failing operation falls back to a verified reload of the resulting set.
		map4 := map3
		map4.Content = bundle.TextOf("a.test be_b\nb.test be_b\nc.test be_dyn\n")
		next4 := bundle.New([]bundle.File{cfg3, map4})
		code, res = call(t, srv, http.MethodPost, "/v1/runtime", testUser, testPass, agentapi.RuntimeRequest{
			Operations: []runtime.Op{
				{Operation: &runtime.SetMap{Map: "host.map", Key: "a.test", Value: "be_b"}},
				{Operation: &runtime.DelServer{Backend: "be_dyn", Server: "nope"}},
			},
			Files: []bundle.File{map4}, Hash: next4.Hash,
		})
		if code != http.StatusOK || res.Result != agentapi.ResultRuntimeFallback || !res.Reloaded {
			t.Fatalf("runtime fallback: %d %+v", code, res)
		}
		if got := fetch(t, port, "a.test"); got != "B" {
			t.Fatalf("a.test after fallback: %q", got)
		}
		if got := fetch(t, port, "c.test"); got != "dyn" {
			t.Fatalf("c.test after fallback reload (server from the config): %q", got)
		}
	})

	t.Run("drift shows in treeHash", func(t *testing.T) {
		p := filepath.Join(mapsDir, "host.map")
		orig := readFile(t, p)
		if err := os.WriteFile(p, []byte(orig+"z.test be_a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		st := getState(t, srv)
		if st.TreeHash == st.Hash || st.TreeHash == "" {
			t.Fatalf("drift not visible: hash %s tree %s", st.Hash, st.TreeHash)
		}
		// Applying the current set again repairs the drift (with a reload).
		var files []bundle.File
		for _, f := range a.current.Files {
			files = append(files, f)
		}
		if code, res := putConfig(t, srv, files...); code != http.StatusOK || res.Result != agentapi.ResultApplied || res.Hash != st.Hash {
			t.Fatalf("repair: %d %+v", code, res)
		}
		if readFile(t, p) != orig {
			t.Fatal("map file not repaired")
		}
		if st := getState(t, srv); st.TreeHash != st.Hash {
			t.Fatalf("drift repaired but tree %s != %s", st.TreeHash, st.Hash)
		}
	})

	t.Run("killed agent and haproxy come back with the last config", func(t *testing.T) {
		last := getState(t, srv)
		a.mu.Lock()
		a.proc.kill() // SIGKILL the master and its workers
		a.mu.Unlock()
		srv.Close()
		start := time.Now()
		_, srv2 := startAgent(t, opts)
		t.Logf("restart to serving: %s", time.Since(start))
		if got := fetch(t, port, "a.test"); got != "B" {
			t.Fatalf("after restart a.test: %q", got)
		}
		if got := fetch(t, port, "b.test"); got != "B" {
			t.Fatalf("after restart b.test: %q", got)
		}
		st := getState(t, srv2)
		if st.Hash != last.Hash || st.TreeHash != last.Hash {
			t.Fatalf("restart state hash %s tree %s, want %s", st.Hash, st.TreeHash, last.Hash)
		}
	})
}

func currentPID(t *testing.T, st agentapi.State) int {
	t.Helper()
	for _, w := range st.Workers {
		if w.Reloads == 0 {
			return w.PID
		}
	}
	t.Fatalf("no current worker in %+v", st.Workers)
	return 0
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// assertServing checks that nothing changed since want was taken.
func assertServing(t *testing.T, a *Agent, srv interface{ Close() }, port int, body, disk string, want agentapi.State) {
	t.Helper()
	if got := fetch(t, port, ""); got != body {
		t.Fatalf("body %q, want %q", got, body)
	}
	st := a.State(context.Background())
	if st.Hash != want.Hash || st.TreeHash != want.Hash || st.Reloads != want.Reloads {
		t.Fatalf("state changed: %+v, want hash %s reloads %d", st, want.Hash, want.Reloads)
	}
	if readFile(t, a.opts.Layout.ConfigFile) != disk {
		t.Fatal("config file on disk changed")
	}
}

func TestOptionsValidate(t *testing.T) {
	base := func() Options {
		return Options{Layout: bundle.Layout{ConfigFile: "/c", MapsDir: "/m", SSLCertsDir: "/s", GeneralStorageDir: "/g"},
			StateDir: "/st", Username: "u", Password: "p"}
	}
	o := base()
	o.ReloadVerificationTimeout = 61 * time.Second
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "ceiling") {
		t.Fatalf("61s: %v", err)
	}
	o = base()
	o.Password = ""
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("no password: %v", err)
	}
	o = base()
	if _, err := New(o); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentApplies: applies are serialized; every one is verified and the last
// one to run is what serves and what is on disk.
func TestConcurrentApplies(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	_, srv := startAgent(t, opts)
	port := freePort(t)
	const n = 4
	results := make(chan agentapi.Result, n)
	for i := 0; i < n; i++ {
		go func() {
			_, res := putConfig(t, srv, configFile(frontendCfg(port, fmt.Sprintf("c%d", i), "", "")))
			results <- res
		}()
	}
	ids := map[int]bool{}
	for i := 0; i < n; i++ {
		res := <-results
		if res.Result != agentapi.ResultApplied || ids[res.ReloadID] {
			t.Fatalf("result %+v (ids so far %v)", res, ids)
		}
		ids[res.ReloadID] = true
	}
	st := getState(t, srv)
	if st.LastApply == nil || st.LastApply.Hash != st.Hash || st.TreeHash != st.Hash || st.Reloads != n {
		t.Fatalf("state %+v", st)
	}
	body := fetch(t, port, "")
	if want := bundle.New([]bundle.File{configFile(frontendCfg(port, body, "", ""))}).Hash; want != st.Hash {
		t.Fatalf("serving %q, which is not the current set", body)
	}
}

// TestOrphanedHAProxyIsReplaced: an agent that died without stopping HAProxy leaves
// a master running; when it cannot be adopted (here its master socket is gone) the
// next agent on the same state dir stops it and starts HAProxy anew.
func TestOrphanedHAProxyIsReplaced(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	a1, srv1 := startAgent(t, opts)
	port := freePort(t)
	if code, _ := putConfig(t, srv1, configFile(frontendCfg(port, "one", "", ""))); code != http.StatusOK {
		t.Fatal(code)
	}
	old := a1.proc.pid
	if err := os.Remove(opts.masterSocket()); err != nil {
		t.Fatal(err)
	}
	_, srv2 := startAgent(t, opts) // a1 never stopped its HAProxy
	if alive(old) {
		t.Fatalf("orphaned master %d still running", old)
	}
	if got := fetch(t, port, ""); got != "one" {
		t.Fatalf("after takeover: %q", got)
	}
	if st := getState(t, srv2); st.Hash != bundle.New([]bundle.File{configFile(frontendCfg(port, "one", "", ""))}).Hash {
		t.Fatalf("state %+v", st)
	}
}

// TestBrokenConfigOnDiskFallsBackToBootstrap: a config file that HAProxy cannot run
// and no last known good set: the agent starts on the bootstrap config.
func TestBrokenConfigOnDiskFallsBackToBootstrap(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	if err := os.MkdirAll(filepath.Dir(opts.Layout.ConfigFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(opts.Layout.ConfigFile, []byte("global\n    bogus_keyword\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, srv := startAgent(t, opts)
	resp, err := plainClient.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", opts.StatusPort))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bootstrap healthz: %s", resp.Status)
	}
	st := getState(t, srv)
	if !strings.Contains(readFile(t, opts.Layout.ConfigFile), "bootstrap") || st.TreeHash != st.Hash {
		t.Fatalf("state %+v", st)
	}
}
