package pipeline

import (
	"context"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/benchmix"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/store"
)

// A change renders once: admission renders the proposed object, and when the watch
// brings it with that content (plus the metadata the API server keeps), the live
// store holds the proposed object itself and the render after it reuses every
// file, unit and shared value admission's render made, to the same bundle.
func TestRenderAfterAdmissionReusesIt(t *testing.T) {
	for _, kind := range benchKinds {
		t.Run(string(kind), func(t *testing.T) {
			p := benchPipeline(t, kind)
			extra := benchExtra(kind)
			live := store.NewLive(p.Builder)
			build, res, probe := benchmix.BuildProbe, "http-routes", benchmix.ProbeRoute
			if kind == benchmix.Ingress {
				build, res, probe = benchmix.BuildProbeIngress, "ingresses", benchmix.ProbeIngress
			}
			for r, objs := range build(40) {
				for _, o := range objs {
					if _, err := live.Update(r, o); err != nil {
						t.Fatal(err)
					}
				}
			}
			renderOf := func(what string, in render.Input) *render.Result {
				t.Helper()
				in.ExtraContext = extra
				out, err := p.Engine.Render(context.Background(), in)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				return out
			}
			renderOf("the stores", render.Input{Snapshot: live.Snapshot()})
			for i := 40; i < 43; i++ {
				proposed := probe(i)
				meta := proposed["metadata"].(map[string]any)
				key := meta["namespace"].(string) + "/" + meta["name"].(string)
				snap, err := live.Proposed(res, key, proposed)
				if err != nil || snap == nil {
					t.Fatalf("proposed %s: %v", key, err)
				}
				admitted := renderOf("admission", render.Input{Snapshot: snap})

				stored := probe(i)
				meta = stored["metadata"].(map[string]any)
				meta["resourceVersion"], meta["generation"] = "100", int64(1)
				stored["status"] = map[string]any{"parents": []any{}}
				if out, err := live.Update(res, stored); err != nil || out != store.Stored {
					t.Fatalf("stored %s: %v %v", key, out, err)
				}
				after := renderOf("after the watch", render.Input{Snapshot: live.Snapshot()})
				if r := after.Reuse; r.FilesRendered+r.UnitsRendered+r.SharedComputed > 0 {
					t.Errorf("%s: the render after admission's rendered %d files, %d units, %d shared values; want none", key,
						r.FilesRendered, r.UnitsRendered, r.SharedComputed)
				}
				if after.Bundle.Hash != admitted.Bundle.Hash {
					t.Errorf("%s: the render after admission's differs from it", key)
				}
			}
		})
	}
}
