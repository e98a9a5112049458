package metrics

import (
	"os"
	"strings"
	"testing"
)

// Every metric the controller registers is documented in docs/metrics.md.
func TestEveryMetricIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	m := New()
	// Vectors appear in Gather once a series exists.
	m.HAProxyReloads.WithLabelValues("p", "r")
	m.DebounceFired.WithLabelValues("r")
	m.ResourceEvents.WithLabelValues("r", KindAdd)
	m.WatchedObjects.WithLabelValues("r")
	m.WatchUnserved.WithLabelValues("r")
	m.WatchEventsDropped.WithLabelValues("r", "unchanged")
	m.EventsPublished.WithLabelValues("t")
	m.EventsDroppedBySubscriber.WithLabelValues("s")
	m.ObjectsLeftOut.WithLabelValues("f", "r")
	m.FleetRenders.WithLabelValues("f")
	m.FleetRendersSkipped.WithLabelValues("f")
	m.RenderFragments.WithLabelValues("f", "reused")
	m.ChangeStage.WithLabelValues(StageApplied)
	m.StatusWrites.WithLabelValues("k")
	m.WebhookRequests.WithLabelValues("r", "allowed")
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "haptic_") {
			continue
		}
		n++
		if !strings.Contains(string(doc), "`"+name+"`") && !strings.Contains(string(doc), "`"+name+"{") {
			t.Errorf("docs/metrics.md does not list %s", name)
		}
	}
	if n < 25 {
		t.Fatalf("only %d haptic_ metrics gathered", n)
	}
}
