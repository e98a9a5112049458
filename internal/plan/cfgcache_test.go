package plan

import (
	"slices"
	"strconv"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// The parse cache keeps what the next plan asks for — each fleet's running and
// placed configuration, and the last desired text a plan placed anew (the next
// desired one is derived from it) — and forgets the desired texts placed before,
// and the configuration a plan was made from once a plan starts from the placed one.
func TestParsedConfigsKeepWhatPlansAskFor(t *testing.T) {
	c := &configParses{}
	texts := func() []string {
		var out []string
		for _, p := range c.list {
			out = append(out, p.text.String())
		}
		return out
	}
	cfg := func(name string) string { return "global\n    # " + name + "\n" }
	running, spent := cfg("running"), ""
	for i, name := range []string{"first", "second", "third"} {
		desired, placed := cfg(name+" desired"), cfg(name+" placed")
		if _, err := c.ran(bundle.TextOf(running)); err != nil {
			t.Fatal(err)
		}
		_, _ = c.parse(bundle.TextOf(desired))
		_, _ = c.parse(bundle.TextOf(placed))
		c.planned(bundle.TextOf(running), bundle.TextOf(desired), bundle.TextOf(placed))
		if got := texts(); !slices.Contains(got, desired) || slices.Contains(got, spent) || !slices.Contains(got, placed) || !slices.Contains(got, running) {
			t.Fatalf("change %d: kept %q", i, got)
		}
		if _, err := c.ran(bundle.TextOf(placed)); err != nil { // the pods run it: the next plan starts there
			t.Fatal(err)
		}
		if got := texts(); !slices.Equal(got, []string{desired, placed}) {
			t.Fatalf("change %d: after the pods ran the placed config, kept %q", i, got)
		}
		running, spent = placed, desired
	}
	// A desired config that needed no placing is the one the pods will run.
	desired := cfg("unplaced")
	_, _ = c.parse(bundle.TextOf(desired))
	c.planned(bundle.TextOf(running), bundle.TextOf(desired), bundle.TextOf(desired))
	if got := texts(); !slices.Contains(got, desired) {
		t.Fatalf("the desired config needing no placing was forgotten: %q", got)
	}
}

// A parse's layout is made once and shared, and only the latest layoutsKept are
// kept; a configuration the cache does not hold gets a layout of its own.
func TestLayoutsMadeOnceAndBounded(t *testing.T) {
	c := &configParses{}
	for i := range 4 {
		cfg, err := c.parse(bundle.TextOf("global\ndefaults\nbackend be_" + strconv.Itoa(i) + "\n    server s 10.0.0.1:80\n"))
		if err != nil {
			t.Fatal(err)
		}
		if l := c.layoutOf(cfg); l != c.layoutOf(cfg) || l.backends.get("be_"+strconv.Itoa(i)) == nil {
			t.Fatalf("config %d: layout made twice, or without its backend", i)
		}
	}
	kept := 0
	for _, p := range c.list {
		if p.layout != nil {
			kept++
		}
	}
	if kept != layoutsKept || c.list[len(c.list)-1].layout == nil {
		t.Errorf("%d layouts kept, the latest kept: %v; want %d", kept, c.list[len(c.list)-1].layout != nil, layoutsKept)
	}
	other, _ := config.Parse("global\n")
	if c.layoutOf(other) == c.layoutOf(other) {
		t.Error("a configuration the cache does not hold shares a remembered layout")
	}
}
