package agent

import (
	"context"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// container stands for HAProxy's own container: it waits for the launch file and
// runs HAProxy with its arguments in a process group of its own (the container's
// cgroup); kill ends the group, as a container restart does.
type container struct {
	t   *testing.T
	cmd *exec.Cmd
}

func launchContainer(t *testing.T, opts Options) *container {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args, err := LaunchArgs(ctx, opts.StateDir, 20*time.Millisecond)
	if err != nil {
		t.Error(err)
		return nil
	}
	cmd := exec.Command("haproxy", args...)
	cmd.Stdout, cmd.Stderr = testWriter{t}, testWriter{t}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return nil
	}
	go func() { _ = cmd.Wait() }()
	c := &container{t: t, cmd: cmd}
	t.Cleanup(c.kill)
	return c
}

func (c *container) kill() {
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	for i := 0; i < 100 && alive(c.cmd.Process.Pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

// startExternal starts an External agent while a container launches its HAProxy.
func startExternal(t *testing.T, opts Options, launch bool) (*Agent, *container) {
	t.Helper()
	opts.External = true
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan *container, 1)
	if launch {
		go func() { started <- launchContainer(t, opts) }()
	} else {
		started <- nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		t.Fatalf("start agent: %v", err)
	}
	return a, <-started
}

// TestExternalHAProxy: with HAProxy in a container of its own the agent starts
// nothing — it writes the launch file, adopts the master the container starts and
// reloads it through the master socket. When that container dies and its
// restartPolicy starts it again, the agent adopts the new master on the last known
// good set and counts a restart; /healthz answers 503 meanwhile. An agent that
// stops leaves HAProxy serving, and the next agent adopts it without a reload.
func TestExternalHAProxy(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	a, c := startExternal(t, opts, true)
	if a.proc.pid != c.cmd.Process.Pid {
		t.Fatalf("adopted master %d, want the container's %d", a.proc.pid, c.cmd.Process.Pid)
	}
	srv := serve(t, a)
	port := freePort(t)
	if code, res := putConfig(t, srv, configFile(frontendCfg(port, "v1", "", ""))); code != http.StatusOK || !res.Reloaded {
		t.Fatalf("v1: %d %+v", code, res)
	}
	if got := fetch(t, port, ""); got != "v1" {
		t.Fatalf("v1 served %q", got)
	}

	c.kill()
	select {
	case <-a.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("Exited not closed after HAProxy's container died")
	}
	for path, want := range map[string]int{"/healthz": http.StatusServiceUnavailable, "/livez": http.StatusOK} {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s while no master runs: %d, want %d", path, resp.StatusCode, want)
		}
	}
	restarted := make(chan *container, 1)
	go func() { restarted <- launchContainer(t, opts) }()
	if err := a.Restart(context.Background()); err != nil {
		t.Fatalf("restart: %v", err)
	}
	c = <-restarted
	if a.proc.pid != c.cmd.Process.Pid || !a.Running() {
		t.Fatalf("after the container's restart the agent watches %d, want %d", a.proc.pid, c.cmd.Process.Pid)
	}
	if got := fetch(t, port, ""); got != "v1" {
		t.Fatalf("after the container's restart: %q, want v1", got)
	}
	before := getState(t, srv)
	if before.HAProxyRestarts != 1 {
		t.Fatalf("haproxyRestarts %d, want 1", before.HAProxyRestarts)
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if !alive(c.cmd.Process.Pid) {
		t.Fatal("the agent's Close stopped HAProxy's container")
	}
	next, _ := startExternal(t, opts, false)
	st := getState(t, serve(t, next))
	if next.proc.pid != c.cmd.Process.Pid || st.Reloads != before.Reloads || st.Hash != before.Hash {
		t.Fatalf("the next agent: master %d reloads %d hash %s, want %d %d %s",
			next.proc.pid, st.Reloads, st.Hash, c.cmd.Process.Pid, before.Reloads, before.Hash)
	}
	if v := st.LastVerify; v == nil || v.Error != "" || v.MapDivergence != 0 {
		t.Fatalf("read-back after adoption: %+v", v)
	}
}
