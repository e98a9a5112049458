package pipeline

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestExampleGolden renders every validation test of the example library and compares
// each rendered file with testdata/golden/<test>/<target>. Run with -update to accept
// a deliberate change.
func TestExampleGolden(t *testing.T) {
	cfg, err := config.LoadFiles("../../examples/ingress/haptic-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	global := cfg.Spec.ValidationTests[validate.GlobalTest]
	var names []string
	for n := range cfg.Spec.ValidationTests {
		if n != validate.GlobalTest {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			f, err := p.Fixtures(name, validate.MergeGlobal(global, cfg.Spec.ValidationTests[name]))
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Render(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("testdata", "golden", name)
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			}
			for _, file := range res.Bundle.Files {
				path := filepath.Join(dir, strings.ReplaceAll(file.Target(), ":", "_"))
				if *update {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(file.Content), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -update to create it)", err)
				}
				if string(want) != file.Content {
					t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", file.Target(), path, file.Content, want)
				}
			}
		})
	}
}
