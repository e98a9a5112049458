package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// getCurrent GETs /v1/config with the given credentials (none when user is "").
func getCurrent(t *testing.T, url, user, pass string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/v1/config", nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// TestGetConfigReturnsTheRunningSet: GET /v1/config answers, to the controller's
// credentials only, the set a real HAProxy runs — after a PUT and after a runtime
// apply — with the HAProxy version; without or with wrong credentials it is 401
// and no file content leaks.
func TestGetConfigReturnsTheRunningSet(t *testing.T) {
	needHAProxy(t)
	dir := t.TempDir()
	opts := testOptions(t, dir)
	_, srv := startAgent(t, opts)
	port := freePort(t)

	const secret = "-----BEGIN PRIVATE KEY-----\nTOP-SECRET-KEY\n-----END PRIVATE KEY-----\n"
	cfg := configFile(mapCfg(port, opts.Layout.MapsDir))
	hostMap := bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("a.test be_a\n")}
	files := []bundle.File{
		cfg, hostMap,
		{Kind: bundle.KindFile, Name: "page.html", Content: bundle.TextOf("<p>hi</p>\n")},
		{Kind: bundle.KindCert, Name: "site.pem", Content: bundle.TextOf(secret)},
		{Kind: bundle.KindCrtList, Name: "list.txt", Content: bundle.TextOf(filepath.Join(opts.Layout.SSLCertsDir, "site.pem") + "\n")},
	}
	applied := bundle.New(files)
	if code, res := putConfig(t, srv, files...); code != http.StatusOK || res.Result != agentapi.ResultApplied {
		t.Fatalf("put: %d %+v", code, res)
	}

	for _, c := range []struct{ name, user, pass string }{{"none", "", ""}, {"wrong password", testUser, "nope"}, {"wrong user", "x", testPass}} {
		code, hdr, body := getCurrent(t, srv.URL, c.user, c.pass)
		if code != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") == "" {
			t.Errorf("%s credentials: %d %q", c.name, code, body)
		}
		if strings.Contains(string(body), "TOP-SECRET") || strings.Contains(string(body), "a.test") {
			t.Errorf("%s credentials: content leaked: %s", c.name, body)
		}
	}

	read := func(what string) agentapi.CurrentConfig {
		t.Helper()
		code, hdr, body := getCurrent(t, srv.URL, testUser, testPass)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", what, code, body)
		}
		if hdr.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", what, hdr.Get("Cache-Control"))
		}
		var cur agentapi.CurrentConfig
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cur); err != nil {
			t.Fatalf("%s: decode: %v", what, err)
		}
		// The body is a valid PUT /v1/config request for the same set.
		if b := bundle.New(cur.Files); b.Hash != cur.Hash {
			t.Fatalf("%s: hash %s does not match the files (%s)", what, cur.Hash, b.Hash)
		}
		if v, err := runtime.ParseVersion(cur.HAProxyVersion); err != nil || !v.AtLeast(2, 6) {
			t.Fatalf("%s: version %q: %v", what, cur.HAProxyVersion, err)
		}
		return cur
	}
	cur := read("after put")
	if cur.Hash != applied.Hash || len(cur.Files) != len(applied.Files) {
		t.Fatalf("after put: hash %s with %d files, want %s with %d", cur.Hash, len(cur.Files), applied.Hash, len(applied.Files))
	}
	for i, f := range applied.Files {
		if !cur.Files[i].Equal(f) {
			t.Errorf("file %d: got %s (%s), want %s (%s)", i, cur.Files[i].Target(), cur.Files[i].Hash, f.Target(), f.Hash)
		}
	}

	// A runtime apply changes the running set: GET follows it.
	newMap := hostMap
	newMap.Content = bundle.TextOf("a.test be_a\nb.test be_b\n")
	next := bundle.New([]bundle.File{cfg, newMap, files[2], files[3], files[4]})
	req := agentapi.RuntimeRequest{
		BaseHash:   applied.Hash,
		Operations: []runtime.Op{{Operation: &runtime.AddMap{Map: "host.map", Key: "b.test", Value: "be_b"}}},
		Files:      []bundle.File{newMap},
		Hash:       next.Hash,
	}
	if code, res := call(t, srv, http.MethodPost, "/v1/runtime", testUser, testPass, req); code != http.StatusOK || res.Reloaded {
		t.Fatalf("runtime: %d %+v", code, res)
	}
	cur = read("after runtime")
	if cur.Hash != next.Hash {
		t.Fatalf("after runtime: hash %s, want %s", cur.Hash, next.Hash)
	}
	if f, ok := bundle.New(cur.Files).Get("map:host.map"); !ok || f.Content.String() != newMap.Content.String() {
		t.Fatalf("after runtime: host.map %+v", f)
	}
}
