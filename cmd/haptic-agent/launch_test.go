package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLaunchedHAProxy: the two containers of an HAProxy pod as processes —
// `haptic-agent launch` waits for the agent's launch file and runs HAProxy as its
// child; the agent with --external-haproxy adopts it and applies a config through
// the master socket's reload. A killed master is started again by the launcher,
// which runs on (no container restart), and the agent adopts the new one
// (haproxyRestarts). A stopped agent leaves HAProxy serving; a stopped launcher
// stops HAProxy and exits 0.
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
	master := readPID(t, filepath.Join(dir, "state", "haproxy.pid"))
	if ppid := parentPID(t, master); ppid != launcher.Process.Pid {
		t.Fatalf("master %d's parent is %d, want the launcher %d\n%s", master, ppid, launcher.Process.Pid, launchLog.String())
	}

	fePort := freePort(t)
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if _, res := applyAnswering(t, client, addr, fePort, "launched"); !res.Reloaded {
		t.Fatalf("apply: not reloaded %+v", res)
	}

	if err := syscall.Kill(master, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for st := agentState(t, client, addr); st.HAProxyRestarts != 1; st = agentState(t, client, addr) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not adopt a new master: %+v\n%s", st, launchLog.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pid := readPID(t, filepath.Join(dir, "state", "haproxy.pid")); pid == master || parentPID(t, pid) != launcher.Process.Pid {
		t.Fatalf("after the kill the master is %d, want a new child of the launcher %d", pid, launcher.Process.Pid)
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
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", fePort))
	if err != nil {
		t.Fatalf("HAProxy stopped serving with the agent: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "launched" {
		t.Fatalf("after the agent stopped: %q", got)
	}

	if err := launcher.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("the launcher did not stop HAProxy\n%s", launchLog.String())
	}
	if code := launcher.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("launcher exit code %d\n%s", code, launchLog.String())
	}
}

// parentPID reads a process's parent from /proc.
func parentPID(t *testing.T, pid int) int {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}
