package agent

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

func TestCheckMaps(t *testing.T) {
	cfg := configFile("global\n")
	ok := []bundle.File{cfg,
		{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("# generated\n\na.test be_a\r\n  b.test\tbe_b  \nlonely.test\n")},
		// Other kinds are not map files, whatever they hold.
		{Kind: bundle.KindFile, Name: "page.http", Content: bundle.TextOf("HTTP/1.1 200 OK\r\n\r\n  # body\x00")},
	}
	if err := checkMaps(ok); err != nil {
		t.Fatal(err)
	}
	bad := []struct{ content, want string }{
		{"a.test be_a\n   # indented\n", `map file host.map: line 2: map key "#"`},
		{"a.test be\x00_b\n", "map file host.map: line 1: holds a NUL byte"},
		{"a.test be_a\nb.test " + strings.Repeat("x", 20000) + "\n", "map file host.map: line 2: 20007 bytes long (the limit of a map line is 16000"},
		{"a.test be_a<<\n", `map file host.map: line 1: map value "be_a<<"`},
		{"a.test be_\x7f\n", "map file host.map: line 1: holds the control character 0x7f"},
	}
	for _, name := range []string{"host.map<<", "my host.map", "a;b.map"} {
		err := checkMaps([]bundle.File{cfg, {Kind: bundle.KindMap, Name: name, Content: bundle.TextOf("a b\n")}})
		if err == nil || !strings.Contains(err.Error(), "the runtime API cannot name it") {
			t.Errorf("map named %q: %v", name, err)
		}
	}
	for _, tt := range bad {
		err := checkMaps([]bundle.File{cfg, {Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(tt.content)}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%.30q: %v, want %q", tt.content, err, tt.want)
		}
	}
}

// TestMapSafety runs a real HAProxy: a map file with comment lines, blank lines,
// leading blanks, tabs, trailing blanks and CRLF applies and verifies with zero
// divergence; a map file with a line the runtime cannot reproduce, or a runtime
// operation with an entry the runtime refuses, is refused with 400 before anything
// is written or sent; a map file with a 20,000-byte line (placed on disk behind the
// agent's back) verifies without a phantom divergence.
func TestMapSafety(t *testing.T) {
	needHAProxy(t)
	opts := testOptions(t, t.TempDir())
	a, srv := startAgent(t, opts)
	port := freePort(t)
	cfg := configFile(mapCfg(port, opts.Layout.MapsDir))
	content := "# host.map, generated\n\n" +
		"a.test be_a\r\n" +
		"   b.test\t \tbe_b  \t\n" +
		"#c.test be_a\n" +
		"\t\n" +
		"d.test be_b"
	hostMap := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(content)}
	if code, res := putConfig(t, srv, cfg, hostMap); code != http.StatusOK {
		t.Fatalf("config: %d %+v", code, res)
	}
	if got := fetch(t, port, "a.test") + fetch(t, port, "b.test") + fetch(t, port, "c.test") + fetch(t, port, "d.test"); got != "ABnomatchB" {
		t.Fatalf("routing: %q", got)
	}
	st0 := verifyState(t, srv)
	if v := st0.LastVerify; v == nil || v.Maps != 1 || v.MapDivergence != 0 || v.Corrected != "" || v.Error != "" {
		t.Fatalf("verify of a map with comments and blanks: %+v", v)
	}
	assertMapIsDisk(t, a)

	// Refused map files: 400, nothing written, nothing reloaded.
	for _, tt := range []struct{ content, want string }{
		{"a.test be_a\n  # looks like a comment\n", `map file host.map: line 2: map key "#"`},
		{"a.test be_a\x00be_b\n", "map file host.map: line 1: holds a NUL byte"},
		{"a.test be_a\rb.test be_a\n", "map file host.map: line 1: holds a carriage return"},
		{"a.test " + strings.Repeat("x", 20000) + "\n", "map file host.map: line 1: 20007 bytes long"},
		{"a.test be_a<<\n", `map file host.map: line 1: map value "be_a<<"`},
	} {
		bad := hostMap
		bad.Content = bundle.TextOf(tt.content)
		code, res := putConfig(t, srv, cfg, bad)
		if code != http.StatusBadRequest || res.Result != agentapi.ResultError || !strings.Contains(res.Error, tt.want) {
			t.Errorf("PUT %.30q: %d %+v, want 400 %q", tt.content, code, res, tt.want)
		}
		next := merged(bundle.New([]bundle.File{cfg, hostMap}), []bundle.File{bad})
		code, res = call(t, srv, http.MethodPost, "/v1/runtime", testUser, testPass, agentapi.RuntimeRequest{
			Files: []bundle.File{bad}, Hash: next.Hash,
			Operations: []runtime.Op{{Operation: &runtime.SetMap{Map: "host.map", Key: "a.test", Value: "be_b"}}},
		})
		if code != http.StatusBadRequest || !strings.Contains(res.Error, tt.want) {
			t.Errorf("POST runtime with %.30q: %d %+v, want 400 %q", tt.content, code, res, tt.want)
		}
	}
	// Refused runtime operations: 400, nothing sent.
	for _, op := range []runtime.Operation{
		&runtime.AddMap{Map: "host.map", Key: "e.test", Value: "be_a<<"},
		&runtime.AddMap{Map: "host.map", Key: "e.test", Value: "be_a\nadd map x y z"},
		&runtime.SetMap{Map: "host.map", Key: "a.test", Value: "be_b\x00"},
		&runtime.ReplaceMap{Map: "host.map", Entries: []runtime.MapEntry{{Key: "a.test", Value: "be_b"}, {Key: "e test", Value: "be_a"}}},
	} {
		files := []bundle.File{{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(content + "\ne.test be_a\n")}}
		code, res := call(t, srv, http.MethodPost, "/v1/runtime", testUser, testPass, agentapi.RuntimeRequest{
			Files: files, Hash: merged(bundle.New([]bundle.File{cfg, hostMap}), files).Hash, Operations: []runtime.Op{{Operation: op}},
		})
		if code != http.StatusBadRequest || !strings.Contains(res.Error, "operation 0: "+op.Kind()+" host.map ") || !strings.Contains(res.Error, "map ") {
			t.Errorf("%s: %d %+v", op.Kind(), code, res)
		}
	}
	if got := readFile(t, a.mapPath("host.map")); got != content {
		t.Fatalf("a refused request changed host.map on disk: %q", got)
	}
	st := getState(t, srv)
	if st.Hash != st0.Hash || st.Reloads != st0.Reloads {
		t.Fatalf("a refused request changed the agent: %+v (before %+v)", st, st0)
	}
	if d := runtime.DiffMap(runtime.ParseMapFile(content), runningMap(t, a)); !d.Empty() {
		t.Fatalf("a refused request reached the worker: %s", d)
	}

	// A map file with a 20,000-byte line (two entries for HAProxy, the first too
	// long for `show map` to print) and comment lines, loaded by a reload behind
	// the agent's back: verification finds no divergence and corrects nothing.
	long := content + "\n# long line\nlong.test " + strings.Repeat("x", 19990) + "\n  # indented\n"
	if err := os.WriteFile(a.mapPath("host.map"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	_, err := a.reload(context.Background(), 0)
	a.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	out := worker(t, a, "show map")
	list, err := runtime.ParseMapList(out)
	if err != nil || len(list) != 1 || list[0].Entries != len(runtime.ParseMapFile(long)) || list[0].Entries != 6 {
		t.Fatalf("HAProxy loaded %+v (%v), ParseMapFile reads %d entries", list, err, len(runtime.ParseMapFile(long)))
	}
	st1 := getState(t, srv)
	st = verifyState(t, srv)
	if v := st.LastVerify; v == nil || v.Maps != 1 || v.MapDivergence != 0 || v.Corrected != "" || v.Error != "" ||
		st.Reloads != st1.Reloads || st.MapDivergence != st0.MapDivergence {
		t.Fatalf("verify of a map with a long line: %+v %+v", st, v)
	}
}
