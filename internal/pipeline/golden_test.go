package pipeline

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/golden"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

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
			golden.Reset(t, dir)
			for _, file := range res.Bundle.Files {
				golden.Assert(t, filepath.Join(dir, strings.ReplaceAll(file.Target(), ":", "_")), []byte(file.Content.String()))
			}
		})
	}
}
