package agent

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// TestRuntimeFilesWrittenSoon: a runtime apply answers before its files are on
// disk; a reload inside fileWriteDelay still loads every apply's entries (it writes
// what waits first), without a reader the files and the manifest reach the disk
// within the delay, and State's hash and tree hash agree while applies land.
func TestRuntimeFilesWrittenSoon(t *testing.T) {
	a, opts, port, cur := startWithHostMap(t)
	hostMap := fileOf(cur, "host.map")
	// adds host at runtime (from any goroutine: it reports, it does not fail t).
	tryAdd := func(host string) error {
		m := fileOf(cur, "host.map")
		m.Content = bundle.TextOf(m.Content.String() + host + " be_b\n")
		next := merged(cur, []bundle.File{m})
		req := agentapi.RuntimeRequest{BaseHash: cur.Hash, Hash: next.Hash, Files: []bundle.File{m},
			Operations: []runtime.Op{{Operation: &runtime.AddMap{Map: "host.map", Key: host, Value: "be_b"}}}}
		res, code := a.ApplyRuntime(context.Background(), req)
		if code != http.StatusOK || res.Result != agentapi.ResultApplied || res.Reloaded {
			return fmt.Errorf("add %s: %d %+v", host, code, res)
		}
		cur = next
		return nil
	}
	add := func(host string) {
		t.Helper()
		if err := tryAdd(host); err != nil {
			t.Fatal(err)
		}
	}
	onDisk := func() string {
		t.Helper()
		data, err := os.ReadFile(opts.Layout.Path(hostMap))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}

	add("b.test")
	add("c.test")
	a.mu.Lock()
	_, err := a.reload(context.Background(), 0)
	a.mu.Unlock()
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	for host, want := range map[string]string{"a.test": "A", "b.test": "B", "c.test": "B"} {
		if got := fetch(t, port, host); got != want {
			t.Fatalf("%s after the reload: %q, want %q", host, got, want)
		}
	}

	for i := range 5 {
		add(fmt.Sprintf("d%d.test", i))
	}
	// The files are written first, then the manifest: both are waited for.
	manifestHash := func() string {
		var m manifest
		_ = readJSON(opts.manifestPath(), &m)
		return m.Hash
	}
	deadline := time.Now().Add(fileWriteDelay + 2*time.Second)
	for onDisk() != fileOf(cur, "host.map").Content.String() || manifestHash() != cur.Hash {
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := onDisk(); got != fileOf(cur, "host.map").Content.String() {
		t.Fatalf("host.map on disk after %s: %q", fileWriteDelay+2*time.Second, got)
	}
	var m manifest
	if err := readJSON(opts.manifestPath(), &m); err != nil || m.Hash != cur.Hash {
		t.Fatalf("manifest %+v (%v), want hash %s", m, err, cur.Hash)
	}

	// State reads the hash and the files together: applies landing meanwhile
	// never show a tree that differs from the hash (a drift to the controller).
	// Applies go on until 20 reads were made while they ran.
	var reads atomic.Int32
	done := make(chan error, 1)
	go func() {
		for i := 0; reads.Load() < 20; i++ {
			if i == 1000 {
				done <- fmt.Errorf("only %d state reads during 1,000 applies", reads.Load())
				return
			}
			if err := tryAdd(fmt.Sprintf("e%d.test", i)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		if st := a.State(context.Background()); st.TreeHash != st.Hash || st.TreeError != "" {
			t.Fatalf("state read %d: hash %s, tree %s (%s)", reads.Load(), st.Hash, st.TreeHash, st.TreeError)
		}
		reads.Add(1)
	}
}

// TestRuntimeFilesWriteRetried: a write that fails (a directory where the map
// goes) leaves the change served, State reports the tree error instead of a tree
// hash, and the timed write, failed too, is tried again until it lands.
func TestRuntimeFilesWriteRetried(t *testing.T) {
	a, opts, port, cur := startWithHostMap(t)
	hostMap := fileOf(cur, "host.map")
	path := opts.Layout.Path(hostMap)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}

	m := hostMap
	m.Content = bundle.TextOf(m.Content.String() + "b.test be_b\n")
	next := merged(cur, []bundle.File{m})
	res, code := a.ApplyRuntime(context.Background(), agentapi.RuntimeRequest{BaseHash: cur.Hash, Hash: next.Hash, Files: []bundle.File{m},
		Operations: []runtime.Op{{Operation: &runtime.AddMap{Map: "host.map", Key: "b.test", Value: "be_b"}}}})
	if code != http.StatusOK || res.Result != agentapi.ResultApplied {
		t.Fatalf("apply: %d %+v", code, res)
	}
	if got := fetch(t, port, "b.test"); got != "B" {
		t.Fatalf("b.test: %q", got)
	}
	if st := a.State(context.Background()); st.TreeError == "" || st.Hash != next.Hash {
		t.Fatalf("state while the map cannot be written: %+v", st)
	}

	time.Sleep(fileWriteDelay + 200*time.Millisecond) // the timed write has failed too
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Fatalf("host.map after the timed write: %v %v, want the directory in its way", fi, err)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(writeRetryDelay + 3*time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && string(data) == m.Content.String() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("host.map not written again: %q, %v", data, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := a.State(context.Background()); st.TreeError != "" || st.TreeHash != next.Hash {
		t.Fatalf("state after the retry: %+v", st)
	}
}

// startWithHostMap starts an agent running a set whose host.map sends a.test to
// be_a, served on the returned port.
func startWithHostMap(t *testing.T) (*Agent, Options, int, *bundle.Bundle) {
	t.Helper()
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	a, srv := startAgent(t, opts)
	port := freePort(t)
	cfg := rbCfg(port, opts.Layout.MapsDir, "")
	hostMap := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("a.test be_a\n")}
	if code, res := putConfig(t, srv, cfg, hostMap); code != http.StatusOK {
		t.Fatalf("base config: %d %+v", code, res)
	}
	return a, opts, port, bundle.New([]bundle.File{cfg, hostMap})
}
