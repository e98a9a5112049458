package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

func testLayout(dir string) bundle.Layout {
	return bundle.Layout{
		ConfigFile: filepath.Join(dir, "haproxy.cfg"), MapsDir: filepath.Join(dir, "maps"),
		SSLCertsDir: filepath.Join(dir, "ssl"), GeneralStorageDir: filepath.Join(dir, "general"),
	}
}

func TestCheckFiles(t *testing.T) {
	l := testLayout("/x")
	cfg := bundle.File{Kind: bundle.KindConfig, Name: "haproxy.cfg"}
	tests := []struct {
		name  string
		files []bundle.File
		want  string
	}{
		{"ok", []bundle.File{cfg, {Kind: bundle.KindMap, Name: "sub/host.map"}, {Kind: bundle.KindCert, Name: "a.pem"}}, ""},
		{"no config", []bundle.File{{Kind: bundle.KindMap, Name: "m"}}, "exactly one config"},
		{"two configs", []bundle.File{cfg, cfg}, "same path"},
		{"traversal", []bundle.File{cfg, {Kind: bundle.KindMap, Name: "../../etc/passwd"}}, "unsafe name"},
		{"absolute", []bundle.File{cfg, {Kind: bundle.KindFile, Name: "/etc/passwd"}}, "unsafe name"},
		{"unclean", []bundle.File{cfg, {Kind: bundle.KindFile, Name: "a/../b"}}, "unsafe name"},
		{"same path", []bundle.File{cfg, {Kind: bundle.KindCert, Name: "a"}, {Kind: bundle.KindCrtList, Name: "a"}}, "same path"},
		{"unknown kind", []bundle.File{cfg, {Kind: "secret", Name: "a"}}, "unknown kind"},
	}
	for _, tt := range tests {
		err := checkFiles(l, tt.files)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestInstallSwapsAndRemovesStale(t *testing.T) {
	dir := t.TempDir()
	l := testLayout(dir)
	old := bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf("old")},
		{Kind: bundle.KindMap, Name: "gone.map", Content: bundle.TextOf("x y\n")},
		{Kind: bundle.KindMap, Name: "kept.map", Content: bundle.TextOf("a b\n")},
	})
	if err := install(l, old.Files, nil); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(l.MapsDir, "foreign.map") // not ours: left alone
	if err := os.WriteFile(foreign, []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	next := bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf("new")},
		{Kind: bundle.KindMap, Name: "kept.map", Content: bundle.TextOf("a c\n")},
		{Kind: bundle.KindCert, Name: "site.pem", Content: bundle.TextOf("PEM")},
	})
	if err := install(l, next.Files, manifestOf(old).Files); err != nil {
		t.Fatal(err)
	}
	tree, err := readTree(l, manifestOf(next))
	if err != nil || tree.Hash != next.Hash {
		t.Fatalf("tree %v: %v", tree, err)
	}
	if _, err := os.Stat(filepath.Join(l.MapsDir, "gone.map")); !os.IsNotExist(err) {
		t.Fatalf("stale map kept: %v", err)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Fatalf("foreign file removed: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(l.SSLCertsDir, "site.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cert mode: %v %v", fi, err)
	}
	entries, _ := os.ReadDir(l.MapsDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".haptic-staged-") {
			t.Fatalf("staged file left: %s", e.Name())
		}
	}
}

func TestMerge(t *testing.T) {
	cur := bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf("c")},
		{Kind: bundle.KindMap, Name: "a.map", Content: bundle.TextOf("1")},
	})
	got := merged(cur, []bundle.File{{Kind: bundle.KindMap, Name: "a.map", Content: bundle.TextOf("2")}, {Kind: bundle.KindMap, Name: "b.map", Content: bundle.TextOf("3")}})
	want := bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf("c")},
		{Kind: bundle.KindMap, Name: "a.map", Content: bundle.TextOf("2")},
		{Kind: bundle.KindMap, Name: "b.map", Content: bundle.TextOf("3")},
	})
	if got.Hash != want.Hash {
		t.Fatalf("merge: %+v", got.Files)
	}
}
