package pipeline

import (
	"context"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/benchmix"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

// The changes a user makes most, rendered by the default libraries, reach HAProxy
// without a `haproxy -c` of the whole bundle (validate.NeedsFullCheck), and each
// bundle so admitted passes it (real HAProxy): a route added with a Service of its own
// (a backend section without servers, then its EndpointSlices' first servers), an
// endpoint moved, and the route taken out with its Service; and, among routes that
// all lead to one Service (the probe's shape), a route added with its Service and
// EndpointSlices at once.
func TestUsualChangesSkipTheFullCheck(t *testing.T) {
	checker := &validate.Checker{NoCache: true}
	if _, err := checker.LookPath(); err != nil {
		t.Fatalf("haproxy is needed (make haproxy): %v", err)
	}
	const n = 200
	type step struct {
		what string
		snap *snapshot.Snapshot
	}
	for _, kind := range benchKinds {
		t.Run(string(kind), func(t *testing.T) {
			p := benchPipeline(t, kind)
			checker.Layout = p.Layout
			// checkSteps renders each step after start and checks it against the last
			checkSteps := func(start *snapshot.Snapshot, steps []step) {
				t.Helper()
				bundleOf := func(snap *snapshot.Snapshot) *bundle.Bundle {
					res, err := p.Engine.Render(context.Background(), render.Input{Snapshot: snap, ExtraContext: benchExtra(kind)})
					if err != nil {
						t.Fatal(err)
					}
					return res.Bundle
				}
				prev := bundleOf(start)
				if err := checker.Check(context.Background(), prev); err != nil {
					t.Fatalf("the first render: %v", err)
				}
				for _, step := range steps {
					next := bundleOf(step.snap)
					if full, why := validate.NeedsFullCheck(prev, next, p.Layout); full {
						t.Errorf("%s: needs the full check: %s", step.what, why)
					}
					if err := checker.Check(context.Background(), next); err != nil {
						t.Fatalf("%s: haproxy -c refuses it: %v", step.what, err)
					}
					prev = next
				}
			}
			start := benchSnapshot(t, p, kind, n)
			res, route := routeOf(kind, n)
			withRoute := add(t, p, start, map[string][]map[string]any{res: {route}, "services": {benchmix.Service(n)}})
			withEndpoints := addBackendOf(t, p, withRoute, n)
			checkSteps(start, []step{
				{"a route added with its Service, no endpoints yet", withRoute},
				{"its EndpointSlices: the backend's first servers", withEndpoints},
				{"an endpoint moved", moveEndpoint(t, p, withEndpoints, n)},
				{"the route and its Service taken out", start},
			})

			probe := benchmix.BuildProbeIngress(n)
			if kind == benchmix.HTTPRoute {
				probe = benchmix.BuildProbe(n)
			}
			shared, err := p.Builder.Snapshot(probe)
			if err != nil {
				t.Fatal(err)
			}
			objects := backendOf(n)
			objects[res] = []map[string]any{route}
			checkSteps(shared, []step{
				{"among routes to one Service: a route added with its Service and EndpointSlices", add(t, p, shared, objects)},
				{"among routes to one Service: the route taken out", shared},
			})
		})
	}
}
