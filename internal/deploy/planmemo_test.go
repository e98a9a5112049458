package deploy

import (
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/plan"
)

// TestPlanMemoSharesOnePlanPerKey: pods that run the same set get the same plan
// (computed once); another running set, desired set or aliases plan again.
func TestPlanMemoSharesOnePlanPerKey(t *testing.T) {
	caps, err := plan.CapabilitiesFor("2.6.12")
	if err != nil {
		t.Fatal(err)
	}
	mapSet := func(content string) *bundle.Bundle {
		return bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: "frontend f\n    bind :80\n    use_backend %[req.hdr(host),map(/m/host.map)]\n"},
			{Kind: bundle.KindMap, Name: "host.map", Content: content}})
	}
	run, want := plan.Running{Bundle: mapSet("a be\n")}, mapSet("a be\nb be\n")
	var m planMemo
	first := m.get(run, want, caps)
	if first.res.Reload || len(first.res.Ops) != 1 || len(first.edits)+len(first.whole) != 1 {
		t.Fatalf("plan %+v, edits %d, whole %d", first.res, len(first.edits), len(first.whole))
	}
	if again := m.get(plan.Running{Bundle: mapSet("a be\n")}, mapSet("a be\nb be\n"), caps); again != first {
		t.Error("the same running and desired sets planned twice")
	}
	if other := m.get(plan.Running{Bundle: run.Bundle, Aliases: map[string]string{"x": "y"}}, want, caps); other == first {
		t.Error("other aliases shared the plan")
	}
	if other := m.get(run, mapSet("a be\nc be\n"), caps); other == first || len(other.res.Ops) != 1 {
		t.Error("another desired set shared the plan")
	}
}
