package plan

import (
	"slices"
	"testing"
)

// The parse cache keeps what the next plan asks for — each fleet's running and
// placed configuration — and forgets the desired text a plan placed anew, and the
// configuration a plan was made from once a plan starts from the placed one.
func TestParsedConfigsKeepWhatPlansAskFor(t *testing.T) {
	c := &configParses{}
	texts := func() []string {
		var out []string
		for _, p := range c.list {
			out = append(out, p.text)
		}
		return out
	}
	cfg := func(name string) string { return "global\n    # " + name + "\n" }
	running := cfg("running")
	for i, name := range []string{"first", "second", "third"} {
		desired, placed := cfg(name+" desired"), cfg(name+" placed")
		if _, err := c.ran(running); err != nil {
			t.Fatal(err)
		}
		_, _ = c.parse(desired)
		_, _ = c.parse(placed)
		c.planned(running, desired, placed)
		if got := texts(); slices.Contains(got, desired) || !slices.Contains(got, placed) || !slices.Contains(got, running) {
			t.Fatalf("change %d: kept %q", i, got)
		}
		if _, err := c.ran(placed); err != nil { // the pods run it: the next plan starts there
			t.Fatal(err)
		}
		if got := texts(); !slices.Equal(got, []string{placed}) {
			t.Fatalf("change %d: after the pods ran the placed config, kept %q", i, got)
		}
		running = placed
	}
	// A desired config that needed no placing is the one the pods will run.
	desired := cfg("unplaced")
	_, _ = c.parse(desired)
	c.planned(running, desired, desired)
	if got := texts(); !slices.Contains(got, desired) {
		t.Fatalf("the desired config needing no placing was forgotten: %q", got)
	}
}
