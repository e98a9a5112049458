package pipeline

import (
	"context"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

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
			// Each side decoded as it is in the controller: the review's object by
			// the webhook (util/json), the stored one by the informers
			// (unstructured).
			decoded := func(obj map[string]any, informer bool) map[string]any {
				t.Helper()
				raw, err := json.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				if informer {
					u := &unstructured.Unstructured{}
					if _, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, u); err != nil {
						t.Fatal(err)
					}
					return u.Object
				}
				var m map[string]any
				if err := utiljson.Unmarshal(raw, &m); err != nil {
					t.Fatal(err)
				}
				return m
			}
			for i := 40; i < 43; i++ {
				proposed := decoded(probe(i), false)
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
				stored = decoded(stored, true)
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
