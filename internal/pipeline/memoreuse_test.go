package pipeline

import (
	"context"
	"fmt"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// TestIndexRunsOutliveRendersThatReuseTheIndex: the index's runs of routes are
// memoized with the index, not with the file that asked for it first. Renders that
// reuse the index (EndpointSlice moves, which render one run of backends) keep them,
// as do renders that reuse every file (none asks for the index), so that the route
// change after those renders its own run, not every run again.
// For the gateway library an EndpointSlice move must not compute the index at all:
// the servers are read where the backends are written (gateway_servers).
func TestIndexRunsOutliveRendersThatReuseTheIndex(t *testing.T) {
	for _, kind := range benchKinds {
		t.Run(fmt.Sprint(kind), func(t *testing.T) {
			p := benchPipeline(t, kind)
			const n = 2000
			snap := benchSnapshot(t, p, kind, n)
			extra := benchExtra(kind)
			renderSnap := func(s *snapshot.Snapshot) render.Reuse {
				t.Helper()
				res, err := p.Engine.Render(context.Background(), render.Input{Snapshot: s, ExtraContext: extra})
				if err != nil {
					t.Fatal(err)
				}
				return res.Reuse
			}
			renderSnap(snap)
			moved := moveEndpoint(t, p, snap, n/2)
			for i := range 4 { // moved, back, moved, back
				s := snap
				if i%2 == 0 {
					s = moved
				}
				if r := renderSnap(s); r.SharedComputed != 0 || r.UnitsRendered > 1 {
					t.Errorf("EndpointSlice move %d: %d shared values computed, %d units rendered; want none and one", i, r.SharedComputed, r.UnitsRendered)
				}
			}
			// the same again: every file reused, the index asked for by none (and kept)
			if r := renderSnap(snap); r.FilesRendered != 0 {
				t.Errorf("the same snapshot again: %d files rendered", r.FilesRendered)
			}
			// a route added: its own run of routes and of backends, and what they are in
			if r := renderSnap(addOne(t, p, snap, kind, n)); r.UnitsRendered > 4 {
				t.Errorf("route added after the moves: %d units and values rendered (%d reused); want its own runs", r.UnitsRendered, r.Units)
			}
		})
	}
}
