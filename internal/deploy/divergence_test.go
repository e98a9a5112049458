package deploy

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agent"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

func freeTCPPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startRealAgent starts haptic-agent (in process) with a real HAProxy and its API;
// both stop at cleanup.
func startRealAgent(t *testing.T) (opts agent.Options, host string, port int) {
	t.Helper()
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not installed: make test installs it (apt-get install -y haproxy)")
	}
	dir := t.TempDir()
	opts = agent.Options{
		Layout: bundle.Layout{
			ConfigFile: filepath.Join(dir, "etc", "haproxy.cfg"), MapsDir: filepath.Join(dir, "etc", "maps"),
			SSLCertsDir: filepath.Join(dir, "etc", "ssl"), GeneralStorageDir: filepath.Join(dir, "etc", "general"),
		},
		StateDir: filepath.Join(dir, "state"), ReloadVerificationTimeout: 10 * time.Second,
		Username: "u", Password: "p", StatusAddress: "127.0.0.1", StatusPort: freeTCPPort(t), StopTimeout: 3 * time.Second,
	}
	a, err := agent.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		_ = a.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	host, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ = strconv.Atoi(portStr)
	return opts, host, port
}

// TestOutcomeCarriesAgentDivergence: a deployer driving a real haptic-agent and
// HAProxy reports, in the runtime apply's Outcome, the map divergence the agent's
// read-back found after the key an operation adds was added behind its back.
func TestOutcomeCarriesAgentDivergence(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts, host, port := startRealAgent(t)

	mapPath := filepath.Join(opts.Layout.MapsDir, "host.map")
	cfg := hostMapConfig(t, mapPath)
	mapFile := func(content string) bundle.File {
		return bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(content)}
	}
	onOutcome, next := outcomes(t)
	d := New(ctx, Options{Port: port, Username: "u", Password: "p", SyncTimeout: 20 * time.Second,
		OnOutcome: onOutcome})
	d.SetDesired(bundle.New([]bundle.File{cfg, mapFile("a.test be_a\nb.test be_a\n")}))
	d.SetPods([]Pod{{Name: "haproxy-0", IP: host}})
	if o := next("first apply"); o.Mode != ModeReload {
		t.Fatalf("first apply mode %s", o.Mode)
	}

	// A clean runtime apply reads back without divergence.
	d.SetDesired(bundle.New([]bundle.File{cfg, mapFile("a.test be_a\nb.test be_a\nc.test be_a\n")}))
	if o := next("clean runtime"); o.Mode != ModeRuntime || o.Reloaded || o.MapDivergence != 0 || o.ServerDivergence != 0 {
		t.Fatalf("clean runtime outcome %+v", o)
	}

	// Behind the agent's back: the key the next operation adds, with another value
	// (the read-back looks up the keys operations touch).
	admin := &runtime.Client{Path: filepath.Join(opts.StateDir, "admin.sock")}
	if out, err := admin.Do(ctx, "add map "+mapPath+" d.test be_x"); err != nil {
		t.Fatalf("%q %v", out, err)
	}
	d.SetDesired(bundle.New([]bundle.File{cfg, mapFile("a.test be_a\nb.test be_a\nc.test be_a\nd.test be_a\n")}))
	o := next("diverged runtime")
	if o.Mode != ModeRuntime || !o.Reloaded || o.MapDivergence != 1 || o.ServerDivergence != 0 {
		t.Fatalf("diverged runtime outcome %+v", o)
	}
	running, err := runtime.ShowMap(ctx, admin, mapPath)
	if err != nil {
		t.Fatal(err)
	}
	if diff := runtime.DiffMap(runtime.ParseMapFile("a.test be_a\nb.test be_a\nc.test be_a\nd.test be_a\n"), running); !diff.Empty() {
		t.Fatalf("running map after the reload: %s", diff)
	}
}

// outcomes collects a deployer's outcomes: pass the first function as OnOutcome;
// the second waits for the next outcome and fails the test on an error or after 30 s.
func outcomes(t *testing.T) (func(Outcome), func(what string) Outcome) {
	ch := make(chan Outcome, 10)
	next := func(what string) Outcome {
		t.Helper()
		select {
		case o := <-ch:
			t.Logf("%s: %+v", what, o)
			if o.Err != nil {
				t.Fatalf("%s: %v", what, o.Err)
			}
			return o
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no outcome", what)
		}
		return Outcome{}
	}
	return func(o Outcome) { ch <- o }, next
}

// hostMapConfig is a haproxy.cfg on a free port that picks the backend from the
// host map at mapPath; be_a answers "A".
func hostMapConfig(t *testing.T, mapPath string) bundle.File {
	return bundle.File{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(fmt.Sprintf(`global
    hard-stop-after 5s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:%d
    use_backend %%[req.hdr(host),lower,map(%s)]
backend be_a
    http-request return status 200 content-type text/plain string "A"
`, freeTCPPort(t), mapPath))}
}
