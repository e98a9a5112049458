package render

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestConfigRenderedAgainIsCheckedApart: haproxy.cfg rendered again (large enough to
// be normalized from its last normal form, on another core) is checked there: an
// object that makes it invalid fails the render naming the file, and the next good
// render equals a fresh one.
func TestConfigRenderedAgainIsCheckedApart(t *testing.T) {
	spec := testSpec(`global
    maxconn 10
{% for i := 0; i < 400; i++ %}# filler line {{ i }} to pass the normal form's first marks
{% end %}
{% for _, ing := range resources.Ingresses.List() %}
backend be_{{ ing.Metadata.Name }}
    x {{ ing.Spec.IngressClassName }}
{% end %}
`)
	e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	a := ingress("ns", "a", "haptic")
	for i, s := range []struct {
		class string
		fails bool
	}{{"haptic", false}, {"other", false}, {`bad "open`, true}, {"again", false}} {
		snap := testSnapshot(a, ingress("ns", "b", s.class))
		res, err := e.Render(context.Background(), Input{Snapshot: snap})
		if s.fails {
			var te *TemplateError
			if !errors.As(err, &te) || te.Target != "haproxy.cfg" || !strings.Contains(err.Error(), "quote") {
				t.Fatalf("step %d: err %v, want haproxy.cfg's unbalanced quote", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		fresh, err := e.Render(context.Background(), Input{Snapshot: snap, Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Bundle.Config(); got.Content.String() != fresh.Bundle.Config().Content.String() || got.Hash != fresh.Bundle.Config().Hash {
			t.Fatalf("step %d: the config rendered again differs from a fresh render", i)
		}
		if !strings.Contains(res.Bundle.Config().Content.String(), "x "+s.class) {
			t.Fatalf("step %d: the config does not hold the change", i)
		}
	}
}
