package agent

import (
	"net/http"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// A reload that is not verified within the request's reloadVerificationTimeoutMs
// is rolled back: the last known good set runs and is on disk again (restored
// within the agent's own timeout). A bound above the ceiling is refused.
func TestReloadVerificationTimeoutRollsBack(t *testing.T) {
	needHAProxy(t)
	dir := t.TempDir()
	opts := testOptions(t, dir)
	_, srv := startAgent(t, opts)
	port := freePort(t)

	v1 := configFile(frontendCfg(port, "v1", "", ""))
	if code, res := putConfig(t, srv, v1); code != http.StatusOK || res.Result != agentapi.ResultApplied {
		t.Fatalf("v1: %d %+v", code, res)
	}
	v1Disk := readFile(t, opts.Layout.ConfigFile)
	before := getState(t, srv)

	v2 := bundle.New([]bundle.File{configFile(frontendCfg(port, "v2", "", ""))})
	req := agentapi.ConfigRequest{Hash: v2.Hash, Files: v2.Files, ReloadVerificationTimeoutMs: 1}
	code, res := call(t, srv, http.MethodPut, agentapi.PathConfig, testUser, testPass, req)
	if code != http.StatusBadGateway || res.Result != agentapi.ResultRolledBack {
		t.Fatalf("v2 within 1ms: want 502 rolled_back, got %d %+v", code, res)
	}
	if got := fetch(t, port, ""); got != "v1" {
		t.Fatalf("after the rollback the body is %q, want v1", got)
	}
	st := getState(t, srv)
	if st.Hash != before.Hash || st.TreeHash != before.Hash || readFile(t, opts.Layout.ConfigFile) != v1Disk {
		t.Fatalf("after the rollback: hash %s tree %s, want %s", st.Hash, st.TreeHash, before.Hash)
	}
	if st.FailedReloads != before.FailedReloads+1 {
		t.Fatalf("failed reloads %d -> %d, want one more", before.FailedReloads, st.FailedReloads)
	}

	// The same set with a bound it can meet is applied.
	req.ReloadVerificationTimeoutMs = 10_000
	if code, res := call(t, srv, http.MethodPut, agentapi.PathConfig, testUser, testPass, req); code != http.StatusOK || res.Result != agentapi.ResultApplied {
		t.Fatalf("v2 within 10s: %d %+v", code, res)
	}
	if got := fetch(t, port, ""); got != "v2" {
		t.Fatalf("body %q, want v2", got)
	}

	req.ReloadVerificationTimeoutMs = agentapi.MaxReloadVerificationTimeout.Milliseconds() + 1
	if code, res := call(t, srv, http.MethodPut, agentapi.PathConfig, testUser, testPass, req); code != http.StatusBadRequest || res.Result != agentapi.ResultError {
		t.Fatalf("above the ceiling: want 400, got %d %+v", code, res)
	}
}
