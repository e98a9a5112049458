package agent

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// TestPrepareRuntime: POST /v1/prepare checks, splices and hashes a runtime
// request's edits without running its operations; the same request then applies
// with that work done (Result.Prepared) and serves the change as any runtime
// apply does. A refused prepare keeps nothing, and a prepared request is dropped
// by any other apply (the other one is applied as usual).
func TestPrepareRuntime(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	_, srv := startAgent(t, opts)
	port := freePort(t)
	cfg := rbCfg(port, opts.Layout.MapsDir, "")
	var sb strings.Builder
	for i := range 200 {
		fmt.Fprintf(&sb, "h%03d.test be_a\n", i)
	}
	hostMap := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: sb.String()}
	if code, res := putConfig(t, srv, cfg, hostMap); code != http.StatusOK {
		t.Fatalf("base config: %d %+v", code, res)
	}
	// adding returns the request that adds host (→ be_b) to set cur.
	adding := func(cur *bundle.Bundle, host string) (agentapi.RuntimeRequest, *bundle.Bundle, string) {
		t.Helper()
		old := fileOf(cur, "host.map")
		want := old
		want.Content = old.Content + host + " be_b\n"
		edit, ok := agentapi.EditOf(old, want)
		if !ok {
			t.Fatalf("no edit adds %s", host)
		}
		next := merged(cur, []bundle.File{want})
		return agentapi.RuntimeRequest{BaseHash: cur.Hash, Edits: []agentapi.FileEdit{edit}, Hash: next.Hash,
			Operations: []runtime.Op{{Operation: &runtime.AddMap{Map: "host.map", Key: host, Value: "be_b"}}}}, next, want.Content
	}
	post := func(path string, req agentapi.RuntimeRequest) (int, agentapi.Result) {
		t.Helper()
		return call(t, srv, http.MethodPost, path, testUser, testPass, req)
	}
	onDisk := func() string {
		t.Helper()
		getState(t, srv) // writes what a runtime apply left to be written soon
		data, err := os.ReadFile(opts.Layout.Path(hostMap))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	base := bundle.New([]bundle.File{cfg, hostMap})
	req, next, want := adding(base, "new.test")

	stale := req
	stale.BaseHash = bundle.HashContent("other")
	wrong := req
	wrong.Edits = []agentapi.FileEdit{req.Edits[0]}
	wrong.Edits[0].Hash = bundle.HashContent("other")
	wrong.Hash = merged(base, []bundle.File{{Kind: bundle.KindMap, Name: "host.map", Content: "other"}}).Hash
	for _, c := range []struct {
		name  string
		req   agentapi.RuntimeRequest
		code  int
		error string
	}{
		{"stale base", stale, http.StatusConflict, "is not the running set"},
		{"result not its hash", wrong, http.StatusBadRequest, "result's hash"},
	} {
		if code, res := post(agentapi.PathPrepare, c.req); code != c.code || !strings.Contains(res.Error, c.error) {
			t.Errorf("prepare, %s: %d %+v, want %d %q", c.name, code, res, c.code, c.error)
		}
	}

	if code, res := post(agentapi.PathPrepare, req); code != http.StatusOK || res.Result != agentapi.ResultPrepared {
		t.Fatalf("prepare: %d %+v", code, res)
	}
	if got := fetch(t, port, "new.test"); got != "nomatch" {
		t.Fatalf("new.test after a prepare: %q (a prepare runs no operation)", got)
	}
	if st := getState(t, srv); st.Hash != base.Hash {
		t.Fatalf("state hash %s after a prepare, want %s", st.Hash, base.Hash)
	}
	code, res := post(agentapi.PathRuntime, req)
	if code != http.StatusOK || res.Result != agentapi.ResultApplied || !res.Prepared || res.Reloaded {
		t.Fatalf("apply of the prepared request: %d %+v", code, res)
	}
	if got := fetch(t, port, "new.test"); got != "B" {
		t.Fatalf("new.test: %q", got)
	}
	if got := onDisk(); got != want {
		t.Fatal("the file on disk is not the prepared edit's result")
	}
	if st := getState(t, srv); st.Hash != next.Hash || st.TreeHash != next.Hash {
		t.Fatalf("state %+v, want hash and tree hash %s", st, next.Hash)
	}
	if code, _ := post(agentapi.PathPrepare, req); code != http.StatusConflict {
		t.Errorf("a prepare of the applied request: %d, want 409 (its base no longer runs)", code)
	}

	// Prepared for one change, asked for another: the other one applies as usual.
	other, _, _ := adding(next, "other.test")
	if code, res := post(agentapi.PathPrepare, other); code != http.StatusOK {
		t.Fatalf("prepare other.test: %d %+v", code, res)
	}
	third, thirdSet, thirdWant := adding(next, "third.test")
	if code, res := post(agentapi.PathRuntime, third); code != http.StatusOK || res.Prepared || res.Result != agentapi.ResultApplied {
		t.Fatalf("apply of another request than the one prepared: %d %+v", code, res)
	}
	if got := fetch(t, port, "third.test"); got != "B" {
		t.Fatalf("third.test: %q", got)
	}
	if got := fetch(t, port, "other.test"); got != "nomatch" {
		t.Fatalf("other.test, prepared and never applied: %q", got)
	}
	if got := onDisk(); got != thirdWant {
		t.Fatal("the file on disk is not third.test's edit")
	}
	if st := getState(t, srv); st.Hash != thirdSet.Hash {
		t.Fatalf("state hash %s, want %s", st.Hash, thirdSet.Hash)
	}
}
