package deploy

import (
	"fmt"
	"slices"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/plan"
)

// TestPlanMemoSharesOnePlanPerKey: pods that run the same set get the same plan
// (computed once); another running set, desired set or aliases plan again.
func TestPlanMemoSharesOnePlanPerKey(t *testing.T) {
	caps := caps2612(t)
	run, want := plan.Running{Bundle: mapSet("a be\n")}, mapSet("a be\nb be\n")
	var m planMemo
	first, ahead := m.get(run, want, caps)
	if ahead {
		t.Error("a plan nobody prepared reported as made ahead")
	}
	if first.res.Reload || len(first.res.Ops) != 1 || len(first.edits)+len(first.whole) != 1 {
		t.Fatalf("plan %+v, edits %d, whole %d", first.res, len(first.edits), len(first.whole))
	}
	if again, _ := m.get(plan.Running{Bundle: mapSet("a be\n")}, mapSet("a be\nb be\n"), caps); again != first {
		t.Error("the same running and desired sets planned twice")
	}
	if other, _ := m.get(plan.Running{Bundle: run.Bundle, Aliases: map[string]string{"x": "y"}}, want, caps); other == first {
		t.Error("other aliases shared the plan")
	}
	if other, _ := m.get(run, mapSet("a be\nc be\n"), caps); other == first || len(other.res.Ops) != 1 {
		t.Error("another desired set shared the plan")
	}
}

// TestPlanMemoPrepared: a plan made ahead is the one the deliveries get, reported
// as made ahead; plans made ahead for other sets do not evict it while the memo
// has room, and the oldest goes once it has none.
func TestPlanMemoPrepared(t *testing.T) {
	caps := caps2612(t)
	run := plan.Running{Bundle: mapSet("a be\n")}
	var m planMemo
	m.prepare(run, mapSet("a be\nb be\n"), caps)()
	for i := range memoSize - 1 {
		m.prepare(run, mapSet(fmt.Sprintf("a be\nx%d be\n", i)), caps)()
	}
	got, ahead := m.get(run, mapSet("a be\nb be\n"), caps)
	if !ahead || len(got.res.Ops) != 1 || got.res.Reload {
		t.Fatalf("prepared plan: ahead %v, %+v", ahead, got.res)
	}
	if again, ahead := m.get(run, mapSet("a be\nb be\n"), caps); again != got || !ahead {
		t.Errorf("second pod's delivery of the prepared plan: same %v, ahead %v", again == got, ahead)
	}
	m.prepare(run, mapSet("a be\nlast be\n"), caps)() // evicts the first one prepared
	if again, ahead := m.get(run, mapSet("a be\nb be\n"), caps); again == got || ahead {
		t.Errorf("past memoSize plans: the oldest kept %v, ahead %v", again == got, ahead)
	}
}

// TestPlanMemoDeliveryBeforePreparedPlan: a delivery that asks for a plan
// prepared but not yet made (the stored change came back before the background
// plan started) waits for that plan: it is the one made ahead, made once.
func TestPlanMemoDeliveryBeforePreparedPlan(t *testing.T) {
	caps := caps2612(t)
	run := plan.Running{Bundle: mapSet("a be\n")}
	var m planMemo
	compute := m.prepare(run, mapSet("a be\nb be\n"), caps)
	got, ahead := m.get(run, mapSet("a be\nb be\n"), caps)
	compute()
	if !ahead || len(got.res.Ops) != 1 || got.res.Reload {
		t.Fatalf("delivery before the prepared plan was made: ahead %v, %+v", ahead, got.res)
	}
}

// mapSet is a configuration that routes by host.map, with content as the map.
func mapSet(content string) *bundle.Bundle {
	return bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf("frontend f\n    bind :80\n    use_backend %[req.hdr(host),map(/m/host.map)]\n")},
		{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(content)}})
}

// TestPlanMemoDropsCarriedOutPlans: a plan from what an earlier plan made to run
// drops that plan (the pods carried it out); plans from elsewhere stay.
func TestPlanMemoDropsCarriedOutPlans(t *testing.T) {
	caps := caps2612(t)
	var m planMemo
	first, _ := m.get(plan.Running{Bundle: mapSet("a be\n")}, mapSet("a be\nb be\n"), caps)
	other, _ := m.get(plan.Running{Bundle: mapSet("z be\n")}, mapSet("z be\ny be\n"), caps)
	if first.res.Running == nil {
		t.Fatal("the first plan made nothing to run")
	}
	next, _ := m.get(*first.res.Running, mapSet("a be\nb be\nc be\n"), caps)
	if len(next.res.Ops) != 1 {
		t.Fatalf("the next plan: %+v", next.res)
	}
	if slices.Contains(m.entries, first) || !slices.Contains(m.entries, other) || !slices.Contains(m.entries, next) {
		t.Errorf("kept: first %v, other %v, next %v", slices.Contains(m.entries, first), slices.Contains(m.entries, other), slices.Contains(m.entries, next))
	}
}

// caps2612 are the capabilities of the HAProxy the tests plan for.
func caps2612(t *testing.T) plan.Capabilities {
	t.Helper()
	caps, err := plan.CapabilitiesFor("2.6.12")
	if err != nil {
		t.Fatal(err)
	}
	return caps
}
