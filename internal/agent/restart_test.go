package agent

import (
	"context"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestRestartAfterTheMasterDied: a killed HAProxy master is started again on the
// last known good set; /healthz answers 503 until then.
func TestRestartAfterTheMasterDied(t *testing.T) {
	needHAProxy(t)
	dir := t.TempDir()
	opts := testOptions(t, dir)
	a, srv := startAgent(t, opts)
	port := freePort(t)
	if code, res := putConfig(t, srv, configFile(frontendCfg(port, "v1", "", ""))); code != http.StatusOK {
		t.Fatalf("v1: %d %+v", code, res)
	}
	old := a.proc
	if err := syscall.Kill(old.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("Exited not closed after the master was killed")
	}
	if a.Running() {
		t.Fatal("Running while the master is dead (/healthz would answer 200)")
	}
	start := time.Now()
	if err := a.Restart(context.Background()); err != nil {
		t.Fatalf("restart: %v", err)
	}
	t.Logf("restarted in %s", time.Since(start))
	if !a.Running() || a.proc == old {
		t.Fatal("not running after Restart")
	}
	if got := fetch(t, port, ""); got != "v1" {
		t.Fatalf("after the restart the body is %q, want v1", got)
	}
	if st := getState(t, srv); st.HAProxyRestarts != 1 {
		t.Fatalf("restarts %d, want 1", st.HAProxyRestarts)
	}
}
