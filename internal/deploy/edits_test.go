package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// bodies records the bodies of the runtime requests a client sends.
type bodies struct {
	mu   sync.Mutex
	seen []string
}

func (b *bodies) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && strings.HasSuffix(r.URL.Path, "/runtime") {
		data, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(data))
		b.mu.Lock()
		b.seen = append(b.seen, string(data))
		b.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (b *bodies) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.seen) == 0 {
		return ""
	}
	return b.seen[len(b.seen)-1]
}

// TestRuntimeAppliesSendEdits: a deployer driving a real haptic-agent and HAProxy
// sends a route's map line as a splice of the pod's 2,000-line map, not the map:
// the request is a few hundred bytes, the pod serves the entry without a reload and
// runs the whole desired map.
func TestRuntimeAppliesSendEdits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts, host, port := startRealAgent(t)
	mapPath := filepath.Join(opts.Layout.MapsDir, "host.map")
	cfg := hostMapConfig(t, mapPath)
	var sb strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sb, "%04d-route.example.com be_a\n", i)
	}
	lines := sb.String()
	hostMap := func(content string) bundle.File {
		return bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(content)}
	}
	rec := &bodies{}
	onOutcome, next := outcomes(t)
	d := New(ctx, Options{Port: port, Username: "u", Password: "p", SyncTimeout: 20 * time.Second,
		OnOutcome: onOutcome, HTTP: &http.Client{Transport: rec}})
	d.SetDesired(bundle.New([]bundle.File{cfg, hostMap(lines)}))
	d.SetPods([]Pod{{Name: "haproxy-0", IP: host}})
	if o := next("first apply"); o.Mode != ModeReload {
		t.Fatalf("first apply mode %s", o.Mode)
	}
	at := strings.Index(lines, "1000-route")
	want := lines[:at] + "0999b-route.example.com be_a\n" + lines[at:]
	d.SetDesired(bundle.New([]bundle.File{cfg, hostMap(want)}))
	if o := next("runtime"); o.Mode != ModeRuntime || o.Reloaded || o.MapDivergence != 0 {
		t.Fatalf("runtime outcome %+v", o)
	}
	body := rec.last()
	if !strings.Contains(body, `"edits"`) || strings.Contains(body, "0500-route") || len(body) > 2000 {
		t.Fatalf("runtime request of %d bytes is not an edit: %.300s", len(body), body)
	}
	admin := &runtime.Client{Path: filepath.Join(opts.StateDir, "admin.sock")}
	running, err := runtime.ShowMap(ctx, admin, mapPath)
	if err != nil {
		t.Fatal(err)
	}
	if diff := runtime.DiffMap(runtime.ParseMapFile(want), running); !diff.Empty() {
		t.Fatalf("running map: %s", diff)
	}
	cur, err := d.Client(Pod{Name: "haproxy-0", IP: host}).Running(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Bundle.Hash != bundle.New([]bundle.File{cfg, hostMap(want)}).Hash {
		t.Fatal("the pod's file set is not the desired one")
	}
}

// TestRefusesField: the answer of an agent that predates a field (its strict
// decoder's 400) is told apart from other refusals.
func TestRefusesField(t *testing.T) {
	old := &agentapi.StatusError{Code: http.StatusBadRequest, Body: `{
  "hash": "",
  "result": "error",
  "reloaded": false,
  "durationMs": 0,
  "error": "decode request: json: unknown field \"edits\""
}`}
	if !refusesField(fmt.Errorf("pod x: %w", old), "edits") {
		t.Error("an old agent's refusal not recognised")
	}
	if refusesField(old, "options") {
		t.Error("a refused edits field taken for refused options")
	}
	oldOps := &agentapi.StatusError{Code: http.StatusBadRequest,
		Body: `{"error": "decode request: operation 0 (add-server): json: unknown field \"options\""}`}
	if !refusesNewOps(oldOps) {
		t.Error("an old agent's refusal of add-server options not recognised")
	}
	if !refusesNewOps(&agentapi.StatusError{Code: http.StatusBadRequest,
		Body: `{"error": "decode request: op: unknown kind \"set-ssl-ca-file\""}`}) {
		t.Error("an old agent's refusal of set-ssl-ca-file not recognised")
	}
	if refusesNewOps(old) {
		t.Error("a refused edits field taken for refused operations")
	}
	for _, err := range []error{
		&agentapi.StatusError{Code: http.StatusBadRequest, Body: `{"error": "edit of map:host.map: the result's hash is a, not b"}`},
		&agentapi.StatusError{Code: http.StatusConflict, Body: `{"error": "unknown field \"edits\""}`},
		fmt.Errorf("dial: refused"),
	} {
		if refusesField(err, "edits") {
			t.Errorf("%v taken for an old agent", err)
		}
	}
}
