package pipeline

import (
	"context"
	"fmt"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/benchmix"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

func TestZZProbeShape(t *testing.T) {
	p := benchPipeline(t, benchmix.Ingress)
	snap, err := p.Builder.Snapshot(benchmix.BuildProbeIngress(5000))
	if err != nil {
		t.Fatal(err)
	}
	r := func(s *snapshot.Snapshot) *render.Result {
		res, err := p.Engine.Render(context.Background(), render.Input{Snapshot: s, ExtraContext: benchExtra(benchmix.Ingress)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	prev := r(snap).Bundle
	for i := range 3 {
		name := fmt.Sprintf("probe-%d", i)
		ing := benchmix.ProbeIngress(9000 + i)
		ing["metadata"].(map[string]any)["name"] = name
		ing["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["http"].(map[string]any)["paths"].([]any)[0].(map[string]any)["backend"].(map[string]any)["service"].(map[string]any)["name"] = name
		svc := benchmix.Service(0)
		svc["metadata"].(map[string]any)["name"] = name
		sl := benchmix.EndpointSlice(0, 0)
		sl["metadata"].(map[string]any)["name"] = name + "-x"
		sl["metadata"].(map[string]any)["labels"].(map[string]any)["kubernetes.io/service-name"] = name
		steps := []map[string][]map[string]any{
			{"services": {svc}, "ingresses": {ing}, "endpoints": {sl}},
		}
		s := snap
		for j, st := range steps {
			s = add(t, p, s, st)
			next := r(s).Bundle
			full, why := validate.NeedsFullCheck(prev, next, p.Layout)
			t.Logf("probe %d step %d: full %v %s", i, j, full, why)
			prev = next
		}
		next := r(snap).Bundle
		full, why := validate.NeedsFullCheck(prev, next, p.Layout)
		t.Logf("probe %d removed: full %v %s", i, full, why)
		prev = next
	}
}
