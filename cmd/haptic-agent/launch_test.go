package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// TestLaunchedHAProxy: the two containers of an HAProxy pod as processes —
// `haptic-agent launch` waits for the agent's launch file and execs HAProxy (the
// master keeps the launcher's PID: it is the container's main process); the agent
// with --external-haproxy adopts it, applies a config through the master socket's
// reload, and when stopped leaves HAProxy serving.
func TestLaunchedHAProxy(t *testing.T) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not installed: make test installs it (apt-get install -y haproxy)")
	}
	dir := t.TempDir()
	bin := buildAgent(t)
	launcher := exec.Command(bin, "launch", "--state-dir", filepath.Join(dir, "state"))
	var launchLog bytes.Buffer
	launcher.Stdout, launcher.Stderr = &launchLog, &launchLog
	launcher.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := launcher.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = launcher.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-launcher.Process.Pid, syscall.SIGKILL)
		<-exited
	})

	args := append(dirArgs(dir), "--external-haproxy", "--status-address", "127.0.0.1",
		"--status-port", fmt.Sprint(freePort(t)), "--reload-verification-timeout", "10s")
	agentCmd, addr := startBinary(t, bin, args)
	if pid := readPID(t, filepath.Join(dir, "state", "haproxy.pid")); pid != launcher.Process.Pid {
		t.Fatalf("master %d, want the launcher's PID %d (exec'd)\n%s", pid, launcher.Process.Pid, launchLog.String())
	}

	fePort := freePort(t)
	cfg := fmt.Sprintf("global\n    hard-stop-after 5s\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n"+
		"frontend fe\n    bind 127.0.0.1:%d\n    http-request return status 200 content-type text/plain string \"launched\"\n", fePort)
	b := bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: cfg}})
	body, _ := json.Marshal(agentapi.ConfigRequest{Hash: b.Hash, Files: b.Files})
	req, _ := http.NewRequest(http.MethodPut, "http://"+addr+"/v1/config", bytes.NewReader(body))
	req.SetBasicAuth("u", "secret-password")
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var res agentapi.Result
	_ = json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !res.Reloaded {
		t.Fatalf("apply: %s %+v", resp.Status, res)
	}

	if err := agentCmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = agentCmd.Wait()
	select {
	case <-exited:
		t.Fatalf("HAProxy exited with the agent\n%s", launchLog.String())
	default:
	}
	resp, err = client.Get(fmt.Sprintf("http://127.0.0.1:%d/", fePort))
	if err != nil {
		t.Fatalf("HAProxy stopped serving with the agent: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "launched" {
		t.Fatalf("after the agent stopped: %q", got)
	}
}
