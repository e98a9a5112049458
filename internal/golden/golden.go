package golden

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Update is the -update flag every golden test shares: accept the output as the new
// golden file instead of comparing.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Assert compares got with the file at path (relative to the test's package), or
// rewrites the file when -update is set.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs (run go test -update to accept): %s", path, FirstDifference(string(want), string(got)))
	}
}

// AssertJSON compares v, as indented JSON with a final newline, with the file at path.
func AssertJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	Assert(t, path, append(b, '\n'))
}

// Reset removes dir when -update is set, so files a test no longer writes do not
// linger as stale goldens.
func Reset(t testing.TB, dir string) {
	t.Helper()
	if *Update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
}

// FirstDifference names the first line where want and got differ, with both versions.
func FirstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return "line " + strconv.Itoa(i+1) + ":\n--- want\n" + wl + "\n--- got\n" + gl
		}
	}
	return "no difference"
}
