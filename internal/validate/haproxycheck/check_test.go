package haproxycheck

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// requireHAProxy fails (rather than skips) without HAProxy: these tests exist to run
// the real binary, and `make test` installs it.
func requireHAProxy(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not on PATH: apt-get install -y haproxy")
	}
}

const validCfg = `global
    log stdout format raw local0

defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 5s

frontend fe
    bind 127.0.0.1:8080
    use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map,be_default)]
    default_backend be_default

backend be_default
    server s1 127.0.0.1:8081

backend be_app
    server s1 127.0.0.1:8082
`

func cfgBundle(cfg string, extra ...bundle.File) *bundle.Bundle {
	return bundle.New(append([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(cfg)}}, extra...))
}

var hostMap = bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("example.com be_app\n")}

func TestCheckValid(t *testing.T) {
	requireHAProxy(t)
	c := &Checker{NoCache: true}
	if err := c.Check(context.Background(), cfgBundle(validCfg, hostMap)); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
}

func TestCheckInvalidShowsLineAndProductionPaths(t *testing.T) {
	requireHAProxy(t)
	cfg := strings.Replace(validCfg, "    default_backend be_default\n", "    default_backend be_default\n    bogus_keyword foo\n", 1)
	err := (&Checker{NoCache: true}).Check(context.Background(), cfgBundle(cfg, hostMap))
	var herr *HAProxyError
	if !errors.As(err, &herr) {
		t.Fatalf("want *HAProxyError, got %T: %v", err, err)
	}
	msg := err.Error()
	for _, want := range []string{
		"[ALERT] config : parsing [/etc/haproxy/haproxy.cfg:14] : unknown keyword 'bogus_keyword'",
		"    14 |     bogus_keyword foo",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(herr.Output, os.TempDir()+"/haptic-validate-") || strings.Contains(msg, "haptic-validate-") {
		t.Errorf("temp dir leaked into error:\n%s", herr.Output)
	}
	if strings.Contains(msg, "Fatal errors found") {
		t.Errorf("generic alert kept next to specific ones:\n%s", msg)
	}
}

func TestCheckMapFileInPlace(t *testing.T) {
	requireHAProxy(t)
	c := &Checker{NoCache: true}
	if err := c.Check(context.Background(), cfgBundle(validCfg, hostMap)); err != nil {
		t.Fatalf("config with map rejected: %v", err)
	}
	// Without the map HAProxy cannot open it: proves the layout is what made it pass.
	err := c.Check(context.Background(), cfgBundle(validCfg))
	if err == nil || !strings.Contains(err.Error(), "/etc/haproxy/maps/host.map") {
		t.Fatalf("want failure naming the production map path, got %v", err)
	}
	if strings.Contains(err.Error(), "haptic-validate-") {
		t.Errorf("temp dir leaked: %v", err)
	}
}

func TestCheckCustomLayout(t *testing.T) {
	requireHAProxy(t)
	layout := bundle.Layout{
		ConfigFile:        "/usr/local/etc/haproxy/haproxy.cfg",
		MapsDir:           "/usr/local/etc/haproxy/maps",
		SSLCertsDir:       "/usr/local/etc/haproxy/ssl",
		GeneralStorageDir: "/usr/local/etc/haproxy/general",
	}
	cfg := strings.ReplaceAll(validCfg, "/etc/haproxy/maps/", "/usr/local/etc/haproxy/maps/")
	c := &Checker{Layout: layout, NoCache: true}
	if err := c.Check(context.Background(), cfgBundle(cfg, hostMap)); err != nil {
		t.Fatalf("custom layout: %v", err)
	}
}

func TestCheckMissingBinary(t *testing.T) {
	c := &Checker{Binary: "/nonexistent/haproxy"}
	err := c.Check(context.Background(), cfgBundle(validCfg))
	if !errors.Is(err, ErrBinaryNotFound) {
		t.Fatalf("want ErrBinaryNotFound, got %v", err)
	}
	want := `haproxy binary "/nonexistent/haproxy" not found: install HAProxy (apt-get install -y haproxy) or pass --haproxy-binary`
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
	if _, err := Version(context.Background(), "no-such-haproxy-binary"); !errors.Is(err, ErrBinaryNotFound) {
		t.Errorf("Version: want ErrBinaryNotFound, got %v", err)
	}
}

func TestCheckUnhashedBundle(t *testing.T) {
	requireHAProxy(t)
	// Bundle literals without hashes must not share one cache entry.
	good := &bundle.Bundle{Files: cfgBundle(validCfg, hostMap).Files}
	bad := &bundle.Bundle{Files: cfgBundle(validCfg).Files}
	if err := (&Checker{}).Check(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	if err := (&Checker{}).Check(context.Background(), bad); err == nil {
		t.Fatal("bad bundle passed on a cache hit")
	}
	if err := (&Checker{}).Check(context.Background(), nil); err == nil {
		t.Fatal("nil bundle passed")
	}
}

func TestCheckNoConfig(t *testing.T) {
	requireHAProxy(t)
	b := bundle.New([]bundle.File{hostMap})
	if err := (&Checker{NoCache: true}).Check(context.Background(), b); err == nil {
		t.Fatal("bundle without haproxy.cfg passed")
	}
}

func TestCheckCancelled(t *testing.T) {
	requireHAProxy(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := (&Checker{NoCache: true}).Check(ctx, cfgBundle(validCfg, hostMap))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

// TestCheckCache counts invocations through a wrapper script: identical bundles are
// checked once, verdicts (valid and invalid) are cached, a changed bundle is not.
func TestCheckCache(t *testing.T) {
	requireHAProxy(t)
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	wrapper := filepath.Join(dir, "haproxy-wrapper")
	script := "#!/bin/sh\necho x >> " + count + "\nexec haproxy \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	calls := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
	c := &Checker{Binary: wrapper}
	good := cfgBundle(validCfg, hostMap)
	bad := cfgBundle(validCfg) // map missing
	for range 3 {
		if err := c.Check(context.Background(), good); err != nil {
			t.Fatal(err)
		}
		if err := c.Check(context.Background(), bad); err == nil {
			t.Fatal("bad bundle passed")
		}
	}
	if n := calls(); n != 2 {
		t.Errorf("haproxy ran %d times, want 2 (one per distinct bundle)", n)
	}
	if err := (&Checker{Binary: wrapper, NoCache: true}).Check(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	if n := calls(); n != 3 {
		t.Errorf("NoCache: haproxy ran %d times in total, want 3", n)
	}
}

func TestLRUEvicts(t *testing.T) {
	c := newLRU(2)
	runs := map[string]int{}
	check := func(h string) {
		_ = c.do(context.Background(), checkKey{hash: h}, func() error { runs[h]++; return nil }, isVerdict)
	}
	check("a")
	check("b")
	check("a") // cached; a is now most recent
	check("c") // evicts b
	check("b") // evicts a
	check("c") // still cached
	if runs["a"] != 1 || runs["b"] != 2 || runs["c"] != 1 {
		t.Errorf("runs %v, want a:1 b:2 c:1", runs)
	}
	if c.len() != 2 {
		t.Errorf("len %d, want 2", c.len())
	}
	uncacheable := 0
	for range 2 {
		_ = c.do(context.Background(), checkKey{hash: "timeout"}, func() error { uncacheable++; return context.DeadlineExceeded }, isVerdict)
	}
	if uncacheable != 2 {
		t.Errorf("uncacheable result was cached")
	}
}

// TestCheckSharedFlight: concurrent checks of one bundle run HAProxy once.
func TestCheckSharedFlight(t *testing.T) {
	c := newLRU(4)
	var runs atomic.Int64
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_ = c.do(context.Background(), checkKey{hash: "x"}, func() error { runs.Add(1); <-release; return nil }, isVerdict)
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Errorf("check ran %d times, want 1", n)
	}
}

func TestVersion(t *testing.T) {
	requireHAProxy(t)
	v, err := Version(context.Background(), "haproxy")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v, "2.") && !strings.HasPrefix(v, "3.") {
		t.Errorf("unexpected version %q", v)
	}
}

// writeExtra writes an extra config file and returns its absolute path.
func writeExtra(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckExtraConfigs: extra files are passed after the config, in order; an alert
// in one names its path and line, an alert in the bundle keeps its excerpt.
func TestCheckExtraConfigs(t *testing.T) {
	requireHAProxy(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "admin.sock")
	good := writeExtra(t, dir, "agent.cfg", "# extra\nglobal\n    stats socket "+sock+" mode 600 level admin\n")
	bad := writeExtra(t, dir, "bad.cfg", "# extra\nglobal\n    bogus_global_keyword on\n")

	c := &Checker{ExtraConfigs: []string{good}, NoCache: true}
	if err := c.Check(context.Background(), cfgBundle(validCfg, hostMap)); err != nil {
		t.Fatalf("valid config with an extra global section rejected: %v", err)
	}

	err := (&Checker{ExtraConfigs: []string{good, bad}, NoCache: true}).Check(context.Background(), cfgBundle(validCfg, hostMap))
	var herr *HAProxyError
	if !errors.As(err, &herr) {
		t.Fatalf("want *HAProxyError, got %T: %v", err, err)
	}
	for _, want := range []string{"parsing [" + bad + ":3]", "bogus_global_keyword", "    3 |     bogus_global_keyword on"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%s", want, err)
		}
	}

	cfg := strings.Replace(validCfg, "    default_backend be_default\n", "    default_backend be_default\n    bogus_keyword foo\n", 1)
	err = c.Check(context.Background(), cfgBundle(cfg, hostMap))
	for _, want := range []string{"[/etc/haproxy/haproxy.cfg:14]", "    14 |     bogus_keyword foo"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}

	if err := (&Checker{ExtraConfigs: []string{"agent.cfg"}}).Check(context.Background(), cfgBundle(validCfg, hostMap)); err == nil ||
		!strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("relative extra config: want an error, got %v", err)
	}
}

// TestCheckCacheExtraConfigs: verdicts for different extra file lists, or for a
// rewritten extra file, never mix.
func TestCheckCacheExtraConfigs(t *testing.T) {
	requireHAProxy(t)
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	wrapper := filepath.Join(dir, "haproxy-wrapper")
	script := "#!/bin/sh\necho x >> " + count + "\nexec haproxy \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	calls := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
	extra := writeExtra(t, dir, "extra.cfg", "global\n    maxconn 100\n")
	b := cfgBundle(validCfg, hostMap)
	for range 2 {
		if err := (&Checker{Binary: wrapper}).Check(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		if err := (&Checker{Binary: wrapper, ExtraConfigs: []string{extra}}).Check(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	if n := calls(); n != 2 {
		t.Errorf("haproxy ran %d times, want 2 (one per file list)", n)
	}
	writeExtra(t, dir, "extra.cfg", "global\n    bogus_global_keyword on\n")
	if err := (&Checker{Binary: wrapper, ExtraConfigs: []string{extra}}).Check(context.Background(), b); err == nil {
		t.Error("rewritten extra config: cached verdict reused")
	}
	if n := calls(); n != 3 {
		t.Errorf("haproxy ran %d times in total, want 3", n)
	}
}
