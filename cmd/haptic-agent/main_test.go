package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// syncBuffer is a goroutine-safe writer (HAProxy output is copied concurrently).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

var creds = map[string]string{"HAPTIC_AGENT_USERNAME": "u", "HAPTIC_AGENT_PASSWORD": "secret-password"}

func dirArgs(dir string) []string {
	return []string{
		"--config-file", filepath.Join(dir, "etc/haproxy.cfg"), "--maps-dir", filepath.Join(dir, "etc/maps"),
		"--ssl-dir", filepath.Join(dir, "etc/ssl"), "--general-dir", filepath.Join(dir, "etc/general"),
		"--state-dir", filepath.Join(dir, "state"),
	}
}

func TestStartupErrors(t *testing.T) {
	dir := t.TempDir()
	credFile := filepath.Join(dir, "creds")
	if err := os.WriteFile(credFile, []byte("nocolon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"timeout above ceiling", []string{"--reload-verification-timeout", "61s"}, creds, "ceiling of 1m0s"},
		{"no credentials", nil, map[string]string{"HAPTIC_AGENT_USERNAME": "u"}, "no agent credentials"},
		{"bad credentials file", []string{"--credentials-file", credFile}, nil, "username:password"},
		{"bad flag", []string{"--nope"}, creds, "flag provided but not defined"},
		{"negative verify interval", []string{"--verify-interval", "-1s"}, creds, "verify interval -1s is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr syncBuffer
			code := run(context.Background(), append(dirArgs(dir), tt.args...), env(tt.env), &stderr, nil)
			if code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("code %d, stderr %q", code, stderr.String())
			}
			if strings.Contains(stderr.String(), "secret-password") {
				t.Fatal("password in output")
			}
		})
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestRunServesAndStops runs the command in-process: bootstrap /healthz, one apply,
// then a graceful stop that ends HAProxy.
func TestRunServesAndStops(t *testing.T) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not installed: make test installs it (apt-get install -y haproxy)")
	}
	dir := t.TempDir()
	statusPort, fePort := freePort(t), freePort(t)
	args := append(dirArgs(dir), "--listen", "127.0.0.1:0", "--status-address", "127.0.0.1",
		"--status-port", fmt.Sprint(statusPort), "--reload-verification-timeout", "10s", "--stop-timeout", "3s")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	codec := make(chan int, 1)
	var stderr syncBuffer
	go func() { codec <- run(ctx, args, env(creds), &stderr, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case code := <-codec:
		t.Fatalf("exited %d: %s", code, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("agent not ready")
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cancel()
			<-codec
		}
	})

	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(url string) (int, string) {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(fmt.Sprintf("http://127.0.0.1:%d/healthz", statusPort)); code != 200 || body != "ok" {
		t.Fatalf("bootstrap healthz: %d %q", code, body)
	}
	if code, _ := get("http://" + addr + "/healthz"); code != 200 {
		t.Fatalf("agent healthz: %d", code)
	}

	b, _ := applyAnswering(t, client, addr, fePort, "hello")
	if code, body := get(fmt.Sprintf("http://127.0.0.1:%d/", fePort)); code != 200 || body != "hello" {
		t.Fatalf("after apply: %d %q", code, body)
	}
	pid := readPID(t, filepath.Join(dir, "state", "haproxy.pid"))

	// The master is killed: the agent starts HAProxy again on the last known good
	// set, and says so in its state.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	state := func() agentapi.State {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/state", nil)
		req.SetBasicAuth("u", "secret-password")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st agentapi.State
		_ = json.NewDecoder(resp.Body).Decode(&st)
		return st
	}
	deadline := time.Now().Add(20 * time.Second)
	for state().HAProxyRestarts != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("haproxy not restarted: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := state(); st.Hash != b.Hash {
		t.Fatalf("restarted on %s, want the last applied set %s", st.Hash, b.Hash)
	}
	if code, body := get(fmt.Sprintf("http://127.0.0.1:%d/", fePort)); code != 200 || body != "hello" {
		t.Fatalf("after the restart: %d %q", code, body)
	}
	if newPID := readPID(t, filepath.Join(dir, "state", "haproxy.pid")); newPID == pid {
		t.Fatalf("pid file still names the killed master %d", pid)
	}
	if code, _ := get("http://" + addr + "/healthz"); code != 200 {
		t.Fatalf("agent healthz after the restart: %d", code)
	}
	pid = readPID(t, filepath.Join(dir, "state", "haproxy.pid"))

	cancel() // as SIGTERM does
	select {
	case code := <-codec:
		stopped = true
		if code != 0 {
			t.Fatalf("exit code %d: %s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("agent did not stop")
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Fatalf("haproxy master %d still running", pid)
	}
	if strings.Contains(stderr.String(), "secret-password") {
		t.Fatal("password in logs")
	}
}

func readPID(t *testing.T, p string) int {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(string(data), &pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// The chart sets the reload verification timeout through the environment; the
// command line wins over it, and an invalid or too large value is a usage error.
func TestReloadVerificationTimeoutFromEnv(t *testing.T) {
	dir := t.TempDir()
	with := func(v string) map[string]string {
		m := map[string]string{envReloadVerificationTimeout: v}
		for k, x := range creds {
			m[k] = x
		}
		return m
	}
	c, err := parse(dirArgs(dir), env(with("7s")), io.Discard)
	if err != nil || c.opts.ReloadVerificationTimeout != 7*time.Second {
		t.Fatalf("env 7s: got %v, %v", c, err)
	}
	c, err = parse(append(dirArgs(dir), "--reload-verification-timeout=3s"), env(with("7s")), io.Discard)
	if err != nil || c.opts.ReloadVerificationTimeout != 3*time.Second {
		t.Fatalf("flag 3s over env 7s: got %v, %v", c, err)
	}
	c, err = parse(dirArgs(dir), env(creds), io.Discard)
	if err != nil || c.opts.ReloadVerificationTimeout != 60*time.Second {
		t.Fatalf("no env: got %v, %v", c, err)
	}
	for _, bad := range []string{"soon", "2m"} {
		if _, err := parse(dirArgs(dir), env(with(bad)), io.Discard); err == nil {
			t.Errorf("env %q accepted", bad)
		}
	}
}

// applyAnswering PUTs a haproxy.cfg whose one frontend, on 127.0.0.1:fePort, answers
// text, to the agent at addr; the test fails unless the agent answers 200.
func applyAnswering(t *testing.T, client *http.Client, addr string, fePort int, text string) (*bundle.Bundle, agentapi.Result) {
	t.Helper()
	cfg := fmt.Sprintf("global\n    hard-stop-after 5s\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n"+
		"frontend fe\n    bind 127.0.0.1:%d\n    http-request return status 200 content-type text/plain string %q\n", fePort, text)
	b := bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(cfg)}})
	body, _ := json.Marshal(agentapi.ConfigRequest{Hash: b.Hash, Files: b.Files})
	req, _ := http.NewRequest(http.MethodPut, "http://"+addr+"/v1/config", bytes.NewReader(body))
	req.SetBasicAuth("u", "secret-password")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res agentapi.Result
	_ = json.NewDecoder(resp.Body).Decode(&res)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("apply: %s %+v", resp.Status, res)
	}
	return b, res
}
