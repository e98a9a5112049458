package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildAgent builds the command once per test binary run.
func buildAgent(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "haptic-agent-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "haptic-agent")
		if out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// startBinary runs the built agent; it is stopped by PID at cleanup. It returns the
// process and the API address the agent logged.
func startBinary(t *testing.T, bin string, args []string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--listen", "127.0.0.1:0")...)
	cmd.Env = append(os.Environ(), "HAPTIC_AGENT_USERNAME=u", "HAPTIC_AGENT_PASSWORD=secret-password")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addrRe := regexp.MustCompile(`agent listening"? addr=(\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := addrRe.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case addr := <-found:
		return cmd, addr
	case <-time.After(20 * time.Second):
		t.Fatal("agent did not start")
		return nil, ""
	}
}

// TestKilledAgentComesBack: SIGKILL the agent process and its HAProxy, start a new
// agent on the same dirs: it serves the last config at once and reports its hash.
func TestKilledAgentComesBack(t *testing.T) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not installed: make test installs it (apt-get install -y haproxy)")
	}
	dir := t.TempDir()
	bin := buildAgent(t)
	args := append(dirArgs(dir), "--status-address", "127.0.0.1", "--status-port", fmt.Sprint(freePort(t)),
		"--reload-verification-timeout", "10s", "--stop-timeout", "3s")
	first, addr := startBinary(t, bin, args)

	fePort := freePort(t)
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	b, _ := applyAnswering(t, client, addr, fePort, "last")

	master := readPID(t, filepath.Join(dir, "state", "haproxy.pid"))
	// The agent first: alive, it would start HAProxy again at once.
	_ = first.Process.Kill()
	_ = first.Wait()
	_ = syscall.Kill(-master, syscall.SIGKILL) // HAProxy's process group

	start := time.Now()
	_, addr2 := startBinary(t, bin, args)
	t.Logf("restarted in %s", time.Since(start))
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", fePort))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "last" {
		t.Fatalf("after restart: %q", got)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr2+"/v1/state", nil)
	req.SetBasicAuth("u", "secret-password")
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st agentapi.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Hash != b.Hash || st.TreeHash != b.Hash {
		t.Fatalf("state hash %s tree %s, want %s", st.Hash, st.TreeHash, b.Hash)
	}
}

// TestKilledAgentIsAdopted: SIGKILL of the agent alone leaves HAProxy serving (no
// parent-death signal); a new agent on the same dirs adopts the running master —
// same PID, HAProxy's reload counter unchanged — and reports the set it runs.
func TestKilledAgentIsAdopted(t *testing.T) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not installed: make test installs it (apt-get install -y haproxy)")
	}
	dir := t.TempDir()
	bin := buildAgent(t)
	args := append(dirArgs(dir), "--status-address", "127.0.0.1", "--status-port", fmt.Sprint(freePort(t)),
		"--reload-verification-timeout", "10s", "--stop-timeout", "3s")
	first, addr := startBinary(t, bin, args)
	fePort := freePort(t)
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	b, _ := applyAnswering(t, client, addr, fePort, "served")
	before := agentState(t, client, addr)
	master := readPID(t, filepath.Join(dir, "state", "haproxy.pid"))

	_ = first.Process.Kill()
	_ = first.Wait()
	for range 20 { // HAProxy serves while no agent runs
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", fePort))
		if err != nil {
			t.Fatalf("HAProxy stopped serving with the agent: %v", err)
		}
		resp.Body.Close()
		time.Sleep(10 * time.Millisecond)
	}
	_, addr2 := startBinary(t, bin, args)
	after := agentState(t, client, addr2)
	if pid := readPID(t, filepath.Join(dir, "state", "haproxy.pid")); pid != master {
		t.Fatalf("master %d after the agent's restart, want the adopted %d", pid, master)
	}
	if after.Reloads != before.Reloads || after.Hash != b.Hash || after.TreeHash != b.Hash {
		t.Fatalf("after adoption: reloads %d (before %d), hash %s, tree %s; want %s", after.Reloads, before.Reloads, after.Hash, after.TreeHash, b.Hash)
	}
}

func agentState(t *testing.T, client *http.Client, addr string) agentapi.State {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/state", nil)
	req.SetBasicAuth("u", "secret-password")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st agentapi.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}
