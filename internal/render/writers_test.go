package render

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// A config whose map line is the IngressClassName field, written with map_key.
const leaveOutTemplate = `global
{% for _, ing := range resources.Ingresses.List() %}
# {{ comment(ing.Spec.IngressClassName) }}
{% end %}
`

func leaveOutEngine(t *testing.T, cfg string) *Engine {
	t.Helper()
	e, err := Compile(testSpec(cfg), Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestWritersRefuseAndTheObjectIsLeftOut(t *testing.T) {
	cfg := `global
{% for _, ing := range resources.Ingresses.List() %}
  # {{ comment(ing.Metadata.Name) }}
  setenv {{ cfg_word(ing.Spec.IngressClassName, "spec.ingressClassName") }} x
{% end %}
`
	e := leaveOutEngine(t, cfg)
	snap := testSnapshot(ingress("a", "good", "plain"), ingress("b", "bad", "has\nnewline"), ingress("c", "quoted", "it's #1"))

	// Without LeaveOut the first failing object stops the render and is named.
	_, err := e.Render(context.Background(), Input{Snapshot: snap})
	var te *TemplateError
	if !errors.As(err, &te) {
		t.Fatalf("want a TemplateError, got %v", err)
	}
	if res, key, ok := te.Culprit(); !ok || res != "ingresses" || key != "b/bad" || !strings.Contains(te.Message, "spec.ingressClassName") {
		t.Fatalf("culprit %s %s %v, message %q", res, key, ok, te.Message)
	}

	// With LeaveOut the rest is rendered and the object reported.
	out, err := e.Render(context.Background(), Input{Snapshot: snap, LeaveOut: true, Suspects: []snapshot.Ref{{Resource: "ingresses", Key: "b/bad"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.LeftOut) != 1 || out.LeftOut[0].Key != "b/bad" || !strings.Contains(out.LeftOut[0].Reason, "newline") {
		t.Fatalf("left out: %+v", out.LeftOut)
	}
	got := out.Bundle.Files[0].Content.String()
	for _, want := range []string{`setenv plain x`, `setenv 'it'\''s #1' x`, `# "quoted"`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestRenderedOutputIsChecked(t *testing.T) {
	// A template that forgets the writer cannot add a map entry: the map check fails
	// the render and the object is found.
	spec := testSpec("global\n")
	spec.Maps = map[string]v1alpha1.GeneratedFile{"routes.map": {Template: `{% for _, ing := range resources.Ingresses.List() %}{{ ing.Metadata.Name }} {{ ing.Spec.IngressClassName }}<<
{% end %}`}}
	e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Render(context.Background(), Input{Snapshot: testSnapshot(ingress("a", "x", "y")), LeaveOut: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.LeftOut) != 1 || !strings.Contains(out.LeftOut[0].Reason, `"<<"`) {
		t.Fatalf("left out: %+v", out.LeftOut)
	}
}

func TestRefusedObjectsAreReported(t *testing.T) {
	e := leaveOutEngine(t, leaveOutTemplate)
	bad := ingress("n", "refused", "x")
	bad.Refused = "spec.rules[0].host: holds a newline"
	out, err := e.Render(context.Background(), Input{Snapshot: testSnapshot(ingress("n", "ok", "y"), bad)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.LeftOut) != 1 || out.LeftOut[0] != (snapshot.LeftOut{Resource: "ingresses", Key: "n/refused", Reason: bad.Refused}) {
		t.Fatalf("left out: %+v", out.LeftOut)
	}
	if c := out.Bundle.Files[0].Content.String(); strings.Contains(c, `"x"`) || !strings.Contains(c, `"y"`) {
		t.Fatalf("output:\n%s", c)
	}
}

func TestLeftOutObjectKeepsItsLastGoodVersion(t *testing.T) {
	cfg := `global
{% for _, ing := range resources.Ingresses.List() %}
  setenv {{ ing.Metadata.Name }} {{ cfg_word(ing.Spec.IngressClassName, "spec.ingressClassName") }}
{% end %}
`
	e := leaveOutEngine(t, cfg)
	good := testSnapshot(ingress("a", "x", "v1"), ingress("a", "y", "v1"))
	refused := ingress("a", "z", "v1")
	refused.Refused = "spec: holds a newline"
	now := testSnapshot(ingress("a", "x", "bad\nvalue"), ingress("a", "y", "v2"), refused, ingress("a", "new", "fine"))
	out, err := e.Render(context.Background(), Input{Snapshot: now, LeaveOut: true, Fallback: good})
	if err != nil {
		t.Fatal(err)
	}
	c := out.Bundle.Files[0].Content.String()
	for _, want := range []string{"setenv x v1", "setenv y v2", "setenv new fine"} {
		if !strings.Contains(c, want) {
			t.Errorf("output lacks %q:\n%s", want, c)
		}
	}
	if strings.Contains(c, "setenv z") || len(out.LeftOut) != 2 || !strings.Contains(out.LeftOut[1].Reason, "last good version") {
		t.Fatalf("output:\n%s\nleft out: %+v", c, out.LeftOut)
	}
	// What was rendered is the next fallback: the bad version never becomes "good".
	again, err := e.Render(context.Background(), Input{Snapshot: now, LeaveOut: true, Fallback: out.Snapshot})
	if err != nil || again.Bundle.Hash != out.Bundle.Hash {
		t.Fatalf("second render: %v\n%s", err, again.Bundle.Files[0].Content.String())
	}
}

// header_ops writes one map value: words sorted by op (add, remove, set) and
// lower-case name, names and values percent-encoded but for "-._~" and alphanumerics,
// a remove without its value.
func TestHeaderOps(t *testing.T) {
	got := headerOps(nil, [][]string{
		{"set", "X-Set", `100% it's = "x"`},
		{"add", "b-Add", "x y"},
		{"remove", "Server", "1"},
		{"add", "A-add", "=&\t~"},
	})
	want := "aA-add=%3D%26%09~ ab-Add=x%20y dServer= sX-Set=100%25%20it%27s%20%3D%20%22x%22"
	if got != want {
		t.Fatalf("header_ops:\n got %s\nwant %s", got, want)
	}
}
