package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// startAbandoned starts an agent that is never closed: it stands for an agent
// process that died and left its HAProxy running.
func startAbandoned(t *testing.T, opts Options) *Agent {
	t.Helper()
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		t.Fatalf("start agent: %v", err)
	}
	t.Cleanup(func() { _ = stopOrphan(&opts) }) // if no successor stopped it
	return a
}

// serve serves a's API for the test.
func serve(t *testing.T, a *Agent) *httptest.Server {
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// TestAdoptRunningMaster: an agent that starts on a state dir whose HAProxy still
// serves adopts it — same master, no reload, the set on disk as its state — reads
// back what runs (a map entry the dead agent added at runtime but never wrote is
// corrected at runtime, not by a reload), applies the next runtime operation
// without a reload, and stops that master when it is closed.
func TestAdoptRunningMaster(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	first := startAbandoned(t, opts)
	srv1 := serve(t, first)
	port := freePort(t)
	cfg := configFile(mapCfg(port, opts.Layout.MapsDir))
	hostMap := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("a.test be_a\n")}
	if code, res := putConfig(t, srv1, cfg, hostMap); code != http.StatusOK {
		t.Fatalf("config: %d %+v", code, res)
	}
	before := getState(t, srv1)
	master := first.proc.pid
	// The first agent dies between a runtime operation and writing its file.
	if _, err := first.admin.Do(context.Background(), "add map "+first.mapPath("host.map")+" z.test be_b"); err != nil {
		t.Fatal(err)
	}

	second, srv2 := startAgent(t, opts)
	if second.proc.pid != master {
		t.Fatalf("the second agent runs master %d, want the adopted %d", second.proc.pid, master)
	}
	st := getState(t, srv2)
	if st.Reloads != before.Reloads || st.HAProxyRestarts != 0 {
		t.Fatalf("adoption reloaded or restarted HAProxy: reloads %d → %d, restarts %d", before.Reloads, st.Reloads, st.HAProxyRestarts)
	}
	if st.Hash != before.Hash || st.TreeHash != before.Hash {
		t.Fatalf("adopted state: hash %s (tree %s), want %s", st.Hash, st.TreeHash, before.Hash)
	}
	if st.LastVerify == nil || st.LastVerify.MapDivergence != 1 || st.LastVerify.Corrected != "runtime" {
		t.Fatalf("the read-back after adoption: %+v, want 1 map divergence corrected at runtime", st.LastVerify)
	}
	assertMapIsDisk(t, second)
	if got := fetch(t, port, "z.test"); got != "nomatch" {
		t.Fatalf("z.test after the read-back: %q, want nomatch (not on disk)", got)
	}

	newMap := hostMap
	newMap.Content = bundle.TextOf("a.test be_a\nb.test be_b\n")
	next := bundle.New([]bundle.File{cfg, newMap})
	code, res := call(t, srv2, http.MethodPost, "/v1/runtime", testUser, testPass, agentapi.RuntimeRequest{
		BaseHash:   st.Hash,
		Operations: []runtime.Op{{Operation: &runtime.AddMap{Map: "host.map", Key: "b.test", Value: "be_b"}}},
		Files:      []bundle.File{newMap},
		Hash:       next.Hash,
	})
	if code != http.StatusOK || res.Result != agentapi.ResultApplied || res.Reloaded {
		t.Fatalf("runtime operation on the adopted master: %d %+v", code, res)
	}
	if got := fetch(t, port, "b.test"); got != "B" {
		t.Fatalf("b.test: %q", got)
	}
	if st := getState(t, srv2); st.Reloads != before.Reloads {
		t.Fatalf("reloads %d, want %d", st.Reloads, before.Reloads)
	}

	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if alive(master) {
		t.Fatalf("the adopted master %d still runs after Close", master)
	}
}

// startAbandonedServing is startAbandoned with a config applied whose frontend, on
// the returned port, answers "v1".
func startAbandonedServing(t *testing.T, opts Options) (*Agent, int) {
	t.Helper()
	a := startAbandoned(t, opts)
	port := freePort(t)
	if code, res := putConfig(t, serve(t, a), configFile(frontendCfg(port, "v1", "", ""))); code != http.StatusOK {
		t.Fatalf("config: %d %+v", code, res)
	}
	return a, port
}

// TestAdoptedMasterDies: the agent notices that an adopted master (not its child)
// exited, and Restart starts HAProxy on the last known good set.
func TestAdoptedMasterDies(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	first, port := startAbandonedServing(t, opts)
	second, _ := startAgent(t, opts)
	if second.proc.pid != first.proc.pid {
		t.Fatal("not adopted")
	}
	if err := syscall.Kill(first.proc.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-second.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the adopted master's exit was not noticed")
	}
	if err := second.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fetch(t, port, ""); got != "v1" {
		t.Fatalf("after the restart: %q", got)
	}
}

// TestNoAdoptionOfAStranger: a pid file naming a process that is not our HAProxy
// master (a reused PID) is not adopted; HAProxy is started anew, and the stranger
// is left alone.
func TestNoAdoptionOfAStranger(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	first, port := startAbandonedServing(t, opts)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// The test binary itself: alive, but not an HAProxy master of this state dir.
	if err := os.WriteFile(opts.pidFile(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	second, _ := startAgent(t, opts)
	if second.proc.pid == os.Getpid() || second.proc.pid == first.proc.pid {
		t.Fatalf("adopted pid %d", second.proc.pid)
	}
	if got := fetch(t, port, ""); got != "v1" {
		t.Fatalf("started anew: %q", got)
	}
}
