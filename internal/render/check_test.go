package render

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

func TestChangedOutputIsChecked(t *testing.T) {
	prev := "global\n    maxconn 10\n"
	if err := checkChanged("config", bundle.TextOf("global\n    maxconn 10\n    x \"open\n"), bundle.TextOf(prev), true); err == nil {
		t.Fatal("a new line with an open quote passed")
	}
	if err := checkChanged("config", bundle.TextOf(prev), bundle.TextOf(prev), true); err != nil {
		t.Fatal(err)
	}
}

// TestCheckChangedIsCheck: for a last output that passed and a new one with lines
// added and taken out at up to two places, checkChanged fails exactly when the whole
// new output fails the check.
func TestCheckChangedIsCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	line := func(bad bool) string {
		if bad {
			return fmt.Sprintf("h%d.example.com be\x01x\n", rng.IntN(1000)) // a control byte
		}
		return fmt.Sprintf("h%d.example.com be_%d\n", rng.IntN(1000), rng.IntN(9))
	}
	checked := 0
	for round := range 3000 {
		var prev []string
		for range rng.IntN(40) {
			prev = append(prev, line(false))
		}
		out := slices.Clone(prev)
		for range 1 + rng.IntN(2) { // one or two places
			at := rng.IntN(len(out) + 1)
			if rng.IntN(3) == 0 && at < len(out) {
				out = slices.Delete(out, at, min(len(out), at+1+rng.IntN(2)))
				continue
			}
			var add []string
			for range 1 + rng.IntN(2) {
				add = append(add, line(rng.IntN(4) == 0))
			}
			out = slices.Insert(out, at, add...)
		}
		p, o := strings.Join(prev, ""), strings.Join(out, "")
		if checkOutput(bundle.KindMap, p) != nil {
			t.Fatalf("round %d: the last output fails", round)
		}
		got, want := checkChanged(bundle.KindMap, bundle.TextOf(o), bundle.TextOf(p), true), checkOutput(bundle.KindMap, o)
		if (got == nil) != (want == nil) {
			t.Fatalf("round %d: checkChanged = %v, the whole check %v\nprev %q\nout  %q", round, got, want, p, o)
		}
		if want != nil {
			checked++
		}
	}
	if checked < 300 {
		t.Fatalf("only %d rounds had a bad line", checked)
	}
}

// TestFirstFileThatFailsIsTheError: a file is checked apart while the next ones
// render; when one fails its check and a later template fails too, the render's
// error is still the first file's, as when they were written one by one.
func TestFirstFileThatFailsIsTheError(t *testing.T) {
	spec := testSpec("global\n")
	spec.Maps = map[string]v1alpha1.GeneratedFile{
		"a.map": {Template: "h.example.com be\x01x\n"},
		"b.map": {Template: `{{ fail("b.map fails") }}`},
	}
	e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Render(context.Background(), Input{Snapshot: testSnapshot()})
	var te *TemplateError
	if !errors.As(err, &te) || te.Target != "map:a.map" {
		t.Fatalf("want a.map's check error, got %v", err)
	}
	delete(spec.Maps, "a.map")
	if e, err = Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}}); err != nil {
		t.Fatal(err)
	}
	if _, err = e.Render(context.Background(), Input{Snapshot: testSnapshot()}); !errors.As(err, &te) || te.Message != "b.map fails" {
		t.Fatalf("want b.map's failure, got %v", err)
	}
}
