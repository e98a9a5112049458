package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/benchmix"
	"github.com/haproxy-haptic/haptic/internal/render"
)

// TestServersAheadRecordsReads: a render from nothing reads the Ingress library's
// server lines on another core (servers_ahead). Their reads must land in the
// backends' units: else the render after an EndpointSlice changed would reuse the
// unit that holds the old address.
func TestServersAheadRecordsReads(t *testing.T) {
	p := benchPipeline(t, benchmix.Ingress)
	snap := benchSnapshot(t, p, benchmix.Ingress, 300)
	full, err := p.compile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	extra := benchExtra(benchmix.Ingress)
	ahead := 0
	// Which backends the template reaches before they are read ahead varies from
	// render to render: every third one's EndpointSlice is moved in turn.
	for i := 0; i < 300; i += 3 {
		// Fresh: nothing earlier is reused, and what this render memoizes is what
		// the next one reuses.
		first, err := p.Engine.Render(ctx, render.Input{Snapshot: snap, ExtraContext: extra, Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		ahead += first.Reuse.ServersAhead
		moved := moveEndpoint(t, p, snap, i)
		got, err := p.Engine.Render(ctx, render.Input{Snapshot: moved, ExtraContext: extra})
		if err != nil {
			t.Fatal(err)
		}
		if got.Reuse.ServersAhead != 0 {
			t.Errorf("endpoint %d: the render after a change read %d backends' lines ahead", i, got.Reuse.ServersAhead)
		}
		want, err := full.Render(ctx, render.Input{Snapshot: moved, ExtraContext: extra, Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		cfg := got.Bundle.Config().Content.String()
		if !strings.Contains(cfg, "10.99.0.1") {
			t.Errorf("endpoint %d: the moved address is not in haproxy.cfg", i)
		}
		if cfg != want.Bundle.Config().Content.String() {
			t.Errorf("endpoint %d: haproxy.cfg differs from a full render", i)
		}
	}
	if ahead == 0 {
		t.Error("no render from nothing read server lines ahead")
	}
}
