package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

const testUser, testPass = "controller", "s3cret-pass"

func needHAProxy(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not installed: make test installs it (apt-get install -y haproxy)")
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func testOptions(t testing.TB, dir string) Options {
	return Options{
		Layout: bundle.Layout{
			ConfigFile:        filepath.Join(dir, "etc", "haproxy.cfg"),
			MapsDir:           filepath.Join(dir, "etc", "maps"),
			SSLCertsDir:       filepath.Join(dir, "etc", "ssl"),
			GeneralStorageDir: filepath.Join(dir, "etc", "general"),
		},
		StateDir:                  filepath.Join(dir, "state"),
		ReloadVerificationTimeout: 10 * time.Second,
		Username:                  testUser,
		Password:                  testPass,
		StatusAddress:             "127.0.0.1",
		StatusPort:                freePort(t),
		StopTimeout:               3 * time.Second,
		HAProxyOutput:             testWriter{t},
	}
}

// testWriter sends HAProxy's output to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("haproxy: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startAgent starts an agent and its API; HAProxy is stopped at cleanup.
func startAgent(t testing.TB, opts Options) (*Agent, *httptest.Server) {
	t.Helper()
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		_ = a.Close()
		t.Fatalf("start agent: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("close agent: %v", err)
		}
	})
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return a, srv
}

// frontendCfg is a config serving body on port, with optional extra frontend lines
// and extra sections.
func frontendCfg(port int, body, feExtra, sections string) string {
	return fmt.Sprintf(`global
    hard-stop-after 5s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:%d
%s    http-request return status 200 content-type text/plain string "%s"
%s`, port, feExtra, body, sections)
}

func configFile(content string) bundle.File {
	return bundle.File{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(content)}
}

// call sends a JSON request to the agent API.
func call(t *testing.T, srv *httptest.Server, method, path, user, pass string, body any) (int, agentapi.Result) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, pass)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var res agentapi.Result
	_ = json.Unmarshal(raw, &res)
	t.Logf("%s %s -> %d %s", method, path, resp.StatusCode, strings.Join(strings.Fields(string(raw)), " "))
	return resp.StatusCode, res
}

func putConfig(t *testing.T, srv *httptest.Server, files ...bundle.File) (int, agentapi.Result) {
	t.Helper()
	b := bundle.New(files)
	return call(t, srv, http.MethodPut, "/v1/config", testUser, testPass, agentapi.ConfigRequest{Hash: b.Hash, Files: b.Files})
}

func getState(t *testing.T, srv *httptest.Server) agentapi.State {
	t.Helper()
	return stateAt(t, srv, "/v1/state")
}

// verifyState is GET /v1/state?verify=runtime.
func verifyState(t *testing.T, srv *httptest.Server) agentapi.State {
	t.Helper()
	return stateAt(t, srv, "/v1/state?verify=runtime")
}

func stateAt(t *testing.T, srv *httptest.Server, path string) agentapi.State {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	req.SetBasicAuth(testUser, testPass)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("state: %s", resp.Status)
	}
	var st agentapi.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

var plainClient = &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// fetch GETs http://127.0.0.1:port/ with a Host header and returns the body.
func fetch(t *testing.T, port int, host string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/", port), nil)
	if host != "" {
		req.Host = host
	}
	resp, err := plainClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s via :%d: %v", host, port, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// merged is merge of whole files, for tests that build a request's resulting set.
func merged(cur *bundle.Bundle, files []bundle.File) *bundle.Bundle {
	b, err := merge(cur, files, nil)
	if err != nil {
		panic(err)
	}
	return b
}
