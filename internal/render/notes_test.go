package render

import (
	"context"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/note"
)

// note() records typed notes — from a closure computed once, from a map template
// rendered in parallel with haproxy.cfg — sorted, without duplicates, and never in
// the bundle.
func TestNoteBuiltin(t *testing.T) {
	spec := testSpec(`global
{% var compute = func() any {
  for _, i := range resources.Ingresses.List() {
    var m = i["metadata"].(map[string]any)
    note("Ingress", m["namespace"].(string), m["name"].(string), "", "Ignored", "class other is not ours")
  }
  return nil
} %}
{% compute() %}
{% note("Gateway", "b", "gw", "http", "PortUnavailable", "port 80 belongs to gateway a/gw") %}
`)
	spec.Maps = map[string]v1alpha1.GeneratedFile{"m.map": {Template: `{% note("Gateway", "b", "gw", "http", "PortUnavailable", "port 80 belongs to gateway a/gw") %}x y`}}
	e, err := Compile(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Render(context.Background(), Input{Snapshot: testSnapshot(ingress("ns", "a", "other"))})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Gateway b/gw [http] PortUnavailable: port 80 belongs to gateway a/gw",
		"Ingress ns/a Ignored: class other is not ours",
	}
	if got := note.Lines(res.Notes); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range res.Bundle.Files {
		if strings.Contains(f.Content.String(), "PortUnavailable") || strings.Contains(f.Content.String(), "Ignored") {
			t.Errorf("%s holds a note:\n%s", f.Target(), f.Content.String())
		}
	}
	// A second render starts with no notes.
	res, err = e.Render(context.Background(), Input{Snapshot: testSnapshot()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 {
		t.Fatalf("second render: notes %v, want the Gateway's only", res.Notes)
	}
}

// A note with an invalid kind or reason is a template bug: the render stops.
func TestNoteBuiltinRejectsBadReason(t *testing.T) {
	for _, call := range []string{
		`note("Gateway", "ns", "gw", "", "port taken", "x")`,
		`note("gateway", "ns", "gw", "", "PortUnavailable", "x")`,
		`note("Gateway", "ns", "", "", "PortUnavailable", "x")`,
	} {
		e, err := Compile(testSpec("global\n{% "+call+" %}\n"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Render(context.Background(), Input{}); err == nil || !strings.Contains(err.Error(), "note(") {
			t.Errorf("%s: err = %v, want a note() error", call, err)
		}
	}
}

// A long message is cut, at a rune boundary.
func TestNoteMessageBounded(t *testing.T) {
	e, err := Compile(testSpec(`global
{% note("Gateway", "ns", "gw", "", "Invalid", extraContext["long"].(string)) %}
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Render(context.Background(), Input{ExtraContext: map[string]any{"long": strings.Repeat("é", maxNoteMessage)}})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Notes[0].Message
	if len(m) > maxNoteMessage+len("…") || !strings.HasSuffix(m, "…") || !strings.HasPrefix(m, "éé") || strings.ContainsRune(m, '\uFFFD') {
		t.Fatalf("message of %d bytes: %q…", len(m), m[:16])
	}
}
