package debug

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestResolveLoopback(t *testing.T) {
	ctx := context.Background()
	for _, addr := range []string{"127.0.0.1:0", "127.1.2.3:6060", "[::1]:6060", "localhost:6060", LoopbackAddr(6060)} {
		got, err := ResolveLoopback(ctx, addr)
		if err != nil {
			t.Errorf("%s refused: %v", addr, err)
			continue
		}
		host, _, _ := net.SplitHostPort(got)
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			t.Errorf("%s resolved to %s", addr, got)
		}
	}
	for _, addr := range []string{":6060", "0.0.0.0:6060", "[::]:6060", "10.1.2.3:6060", "192.168.0.1:6060", "[2001:db8::1]:6060", "6060", "not-a-host.invalid:6060"} {
		if got, err := ResolveLoopback(ctx, addr); err == nil {
			t.Errorf("%s accepted as %s", addr, got)
		}
	}
	if LoopbackAddr(8080) != "127.0.0.1:8080" {
		t.Errorf("LoopbackAddr(8080) = %s", LoopbackAddr(8080))
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.10:0"} {
		ln, err := Listen(context.Background(), addr)
		if err == nil {
			ln.Close()
			t.Errorf("Listen(%s) succeeded", addr)
		} else if !strings.Contains(err.Error(), "loopback") {
			t.Errorf("Listen(%s): %v, want a loopback refusal", addr, err)
		}
	}
	s := New(Options{})
	if err := s.ListenAndServe(context.Background(), "0.0.0.0:0"); err == nil {
		t.Error("ListenAndServe on 0.0.0.0 succeeded")
	}
}

// TestServeOnLoopback runs the real server: pprof index and healthz answer, and
// cancelling the context stops it.
func TestServeOnLoopback(t *testing.T) {
	ln, err := Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(Options{}).Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	for path, want := range map[string]string{
		"/healthz":                       "ok",
		"/debug/pprof/":                  "goroutine",
		"/debug/pprof/goroutine?debug=1": "goroutine profile",
		"/debug/pprof/cmdline":           "debug.test",
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, body lacks %q", path, resp.StatusCode, want)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop")
	}
}

var registerOnDefault sync.Once

func TestPprofNotOnDefaultMux(t *testing.T) {
	// The server's routes are its own; a route added to DefaultServeMux is not served.
	registerOnDefault.Do(func() {
		http.DefaultServeMux.HandleFunc("/debug/only-default", func(http.ResponseWriter, *http.Request) {})
	})
	if New(Options{}).Handler() == http.Handler(http.DefaultServeMux) {
		t.Fatal("the debug server uses DefaultServeMux")
	}
	rec := httptest.NewRecorder()
	New(Options{}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/only-default", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("DefaultServeMux route served: %d", rec.Code)
	}
}

func TestHeapDump(t *testing.T) {
	dir := t.TempDir()
	s := New(Options{HeapDumpDir: dir})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/debug/heapdump")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if !bytes.HasPrefix(body, []byte("go1.7 heap dump\n")) {
		t.Errorf("body starts %q", body[:min(len(body), 32)])
	}
	if int64(len(body)) != resp.ContentLength || len(body) < 1024 {
		t.Errorf("body %d bytes, Content-Length %d", len(body), resp.ContentLength)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dump directory not empty: %v", entries)
	}

	resp, err = http.Head(srv.URL + "/debug/heapdump")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("HEAD: %d", resp.StatusCode)
	}
}

func TestHeapDumpDirFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvHeapDumpDir, dir)
	if got := New(Options{}).HeapDumpDir(); got != dir {
		t.Errorf("HeapDumpDir = %s, want %s", got, dir)
	}
	t.Setenv(EnvHeapDumpDir, "")
	if got := New(Options{}).HeapDumpDir(); got != os.TempDir() {
		t.Errorf("HeapDumpDir = %s, want %s", got, os.TempDir())
	}
}

func TestSecondHeapDumpConflicts(t *testing.T) {
	s := New(Options{HeapDumpDir: t.TempDir()})
	entered, release := make(chan struct{}), make(chan struct{})
	s.beforeDump = func() {
		close(entered)
		<-release
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	first := make(chan int, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/debug/heapdump")
		if err != nil {
			first <- -1
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-entered

	resp, err := http.Get(srv.URL + "/debug/heapdump")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("second request: %d, want 409", resp.StatusCode)
	}

	close(release)
	if code := <-first; code != 200 {
		t.Errorf("first request: %d, want 200", code)
	}
	// The slot is free again.
	s.beforeDump = nil
	resp, err = http.Get(srv.URL + "/debug/heapdump")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("third request: %d, want 200", resp.StatusCode)
	}
}

func get(t *testing.T, s *Server) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/heapdump", nil))
	return rec.Code, rec.Body.String()
}

func TestHeapDumpInsufficientSpace(t *testing.T) {
	dir := t.TempDir()
	s := New(Options{HeapDumpDir: dir})
	wrote := false
	s.writeDump = func(uintptr) { wrote = true }
	s.freeSpace = func(d string) (uint64, error) {
		if d != dir {
			t.Errorf("free space asked for %s, want %s", d, dir)
		}
		return 1 << 20, nil // 1 MiB: less than any estimate
	}
	code, body := get(t, s)
	if code != http.StatusInsufficientStorage || !strings.Contains(body, EnvHeapDumpDir) {
		t.Errorf("%d %q, want 507 naming %s", code, body, EnvHeapDumpDir)
	}
	if wrote {
		t.Error("dump written despite insufficient space")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dump directory not empty: %v", entries)
	}
}

func TestHeapDumpTruncatedIsInsufficientStorage(t *testing.T) {
	dir := t.TempDir()
	s := New(Options{HeapDumpDir: dir})
	s.heapStats = func() heapStats { return heapStats{objects: 64 << 20} }
	s.freeSpace = func(string) (uint64, error) { return 1 << 40, nil }
	// What the runtime leaves behind when the filesystem fills mid-dump: a valid
	// header, then nothing.
	s.writeDump = func(fd uintptr) {
		_, _ = syscall.Write(int(fd), []byte("go1.7 heap dump\n"+strings.Repeat("x", 4096)))
	}
	code, body := get(t, s)
	if code != http.StatusInsufficientStorage || !strings.Contains(body, "ran out of space") {
		t.Errorf("%d %q, want 507 for a short dump", code, body)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dump directory not empty: %v", entries)
	}
}

func TestHeapDumpFreeSpaceError(t *testing.T) {
	s := New(Options{HeapDumpDir: t.TempDir()})
	s.freeSpace = func(string) (uint64, error) { return 0, errors.New("statfs broke") }
	if code, body := get(t, s); code != http.StatusInternalServerError || !strings.Contains(body, "statfs broke") {
		t.Errorf("%d %q", code, body)
	}
	s = New(Options{HeapDumpDir: t.TempDir() + "/missing"})
	if code, _ := get(t, s); code != http.StatusInternalServerError {
		t.Errorf("missing dir: %d", code)
	}
}

func TestFreeSpace(t *testing.T) {
	n, err := freeSpace(t.TempDir())
	if err != nil || n == 0 {
		t.Errorf("freeSpace = %d, %v", n, err)
	}
}
