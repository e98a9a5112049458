package agent

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// TestRuntimeEdits: a runtime apply whose changed map arrives as splices of the
// agent's copy (agentapi.FileEdit) serves the new entry without a reload, leaves
// the whole file on disk and in the manifest's set (what a restart reads back), and
// refuses a stale base (409), a set hash its edits do not make, an unsafe map
// line and a file sent twice (400) without touching anything, and an edit whose
// result is not the file its hash names (400), which it finds only after the
// operations ran (the result is built then), with a reload that forgets them.
func TestRuntimeEdits(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	a, srv := startAgent(t, opts)
	port := freePort(t)
	cfg := rbCfg(port, opts.Layout.MapsDir, "")
	var sb strings.Builder
	for i := range 200 {
		fmt.Fprintf(&sb, "h%03d.test be_a\n", i)
	}
	hostMap := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(sb.String())}
	if code, res := putConfig(t, srv, cfg, hostMap); code != http.StatusOK {
		t.Fatalf("base config: %d %+v", code, res)
	}
	base := bundle.New([]bundle.File{cfg, hostMap})
	baseMap := fileOf(base, "host.map")
	at := strings.Index(baseMap.Content.String(), "h100.test")
	want := baseMap
	want.Content = bundle.TextOf(baseMap.Content.String()[:at] + "new.test be_b\n" + baseMap.Content.String()[at:])
	edit, ok := agentapi.EditOf(baseMap, want)
	if !ok || len(edit.Splices) != 1 || edit.Splices[0].Insert != "new.test be_b\n" {
		t.Fatalf("edit %+v", edit)
	}
	next := merged(base, []bundle.File{want})
	add := []runtime.Op{{Operation: &runtime.AddMap{Map: "host.map", Key: "new.test", Value: "be_b"}}}
	post := func(req agentapi.RuntimeRequest) (int, agentapi.Result) {
		t.Helper()
		return call(t, srv, http.MethodPost, "/v1/runtime", testUser, testPass, req)
	}
	onDisk := func() string {
		t.Helper()
		data, err := os.ReadFile(opts.Layout.Path(baseMap))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}

	t.Run("refused edits change nothing", func(t *testing.T) {
		stale := edit
		stale.BaseHash = bundle.HashContent("other")
		// A splice that does not make the file its hash names, in a request whose
		// set hash agrees with that hash: found only after the operations ran.
		wrongHash := edit
		wrongHash.Hash = bundle.HashContent("other")
		other := baseMap
		other.Content = bundle.TextOf("other")
		wrongSet := merged(base, []bundle.File{other}).Hash
		unsafe := edit
		unsafe.Splices = []agentapi.Splice{{Offset: at, Insert: "bad\x01.test be_b\n"}}
		unsafe.Hash = bundle.HashContent(baseMap.Content.String()[:at] + "bad\x01.test be_b\n" + baseMap.Content.String()[at:])
		before := getState(t, srv)
		for _, c := range []struct {
			name  string
			req   agentapi.RuntimeRequest
			code  int
			error string
		}{
			{"stale base", agentapi.RuntimeRequest{Edits: []agentapi.FileEdit{stale}, Hash: next.Hash, Operations: add}, http.StatusConflict, "does not hold its base"},
			{"wrong set hash", agentapi.RuntimeRequest{Edits: []agentapi.FileEdit{wrongHash}, Hash: next.Hash, Operations: add}, http.StatusBadRequest, "does not match the resulting set"},
			{"wrong hash", agentapi.RuntimeRequest{Edits: []agentapi.FileEdit{wrongHash}, Hash: wrongSet, Operations: add}, http.StatusBadRequest, "result's hash"},
			{"unsafe line", agentapi.RuntimeRequest{Edits: []agentapi.FileEdit{unsafe}, Hash: next.Hash, Operations: add}, http.StatusBadRequest, "control character"},
			{"sent twice", agentapi.RuntimeRequest{Files: []bundle.File{want}, Edits: []agentapi.FileEdit{edit}, Hash: next.Hash, Operations: add}, http.StatusBadRequest, "sent twice"},
		} {
			code, res := post(c.req)
			if code != c.code || !strings.Contains(res.Error, c.error) {
				t.Errorf("%s: %d %+v, want %d %q", c.name, code, res, c.code, c.error)
			}
		}
		if got := onDisk(); got != baseMap.Content.String() {
			t.Fatal("a refused edit changed the file")
		}
		if got := fetch(t, port, "new.test"); got != "nomatch" {
			t.Fatalf("new.test after refused edits: %q", got)
		}
		if st := getState(t, srv); st.Reloads != before.Reloads+1 || st.Hash != base.Hash {
			t.Fatalf("state %+v after refused edits, want %d reloads (the wrong hash's) and hash %s", st, before.Reloads+1, base.Hash)
		}
	})

	t.Run("an edit applies at runtime", func(t *testing.T) {
		before := getState(t, srv)
		code, res := post(agentapi.RuntimeRequest{BaseHash: base.Hash, Edits: []agentapi.FileEdit{edit}, Hash: next.Hash, Operations: add})
		if code != http.StatusOK || res.Result != agentapi.ResultApplied || res.Reloaded || res.MapDivergence != 0 {
			t.Fatalf("edit: %d %+v", code, res)
		}
		if got := fetch(t, port, "new.test"); got != "B" {
			t.Fatalf("new.test: %q", got)
		}
		st := getState(t, srv) // writes what a runtime apply left to be written soon
		if got := onDisk(); got != want.Content.String() {
			t.Fatalf("file on disk is not the edited file")
		}
		if st.Hash != next.Hash || st.TreeHash != next.Hash || st.Reloads != before.Reloads {
			t.Fatalf("state %+v, want hash and tree hash %s", st, next.Hash)
		}
		// What a restarted agent reads back: the manifest's files from disk.
		var m manifest
		if err := readJSON(opts.manifestPath(), &m); err != nil {
			t.Fatal(err)
		}
		tree, err := readTree(opts.Layout, m)
		if err != nil || tree.Hash != next.Hash || m.Hash != next.Hash {
			t.Fatalf("manifest %s, tree %v (%v), want %s", m.Hash, tree, err, next.Hash)
		}
		if cur := a.Current(); fileOf(bundle.New(cur.Files), "host.map").Content.String() != want.Content.String() {
			t.Fatal("GET /v1/config does not return the whole edited map")
		}
		// The last known good file follows within lkgWriteDelay.
		deadline := time.Now().Add(3 * lkgWriteDelay)
		for {
			var lkg bundle.Bundle
			if err := readJSON(opts.lkgPath(), &lkg); err == nil && lkg.Hash == next.Hash {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("last known good file is not %s after %v", next.Hash, 3*lkgWriteDelay)
			}
			time.Sleep(50 * time.Millisecond)
		}
		// The runtime verification compares the whole map with the worker.
		if v := verifyState(t, srv); v.MapDivergence != 0 || v.LastVerify == nil || v.LastVerify.MapDivergence != 0 {
			t.Fatalf("verify after the edit: %+v", v.LastVerify)
		}
	})
}
