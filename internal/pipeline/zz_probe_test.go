package pipeline

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/benchmix"
	"github.com/haproxy-haptic/haptic/internal/plan"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

func TestZZStages(t *testing.T) {
	kind := benchmix.HTTPRoute
	if os.Getenv("KIND") == "ingress" {
		kind = benchmix.Ingress
	}
	p := benchPipeline(t, kind)
	caps, _ := plan.CapabilitiesFor("2.6.12")
	extra := benchExtra(kind)
	n := 3000
	prevSnap := benchSnapshot(t, p, kind, n)
	prev, err := p.Engine.Render(context.Background(), render.Input{Snapshot: prevSnap, ExtraContext: extra})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Create("/tmp/stages.prof")
	pprof.StartCPUProfile(f)
	defer pprof.StopCPUProfile()
	var tr, tv, tp time.Duration
	for i := 0; i < 20; i++ {
		var snap = prevSnap
		if kind == benchmix.HTTPRoute {
			r := benchmix.Route(n + i)
			for _, rule := range r["spec"].(map[string]any)["rules"].([]any) {
				rule.(map[string]any)["backendRefs"].([]any)[0].(map[string]any)["name"] = "bench-svc-0"
			}
			r["metadata"].(map[string]any)["creationTimestamp"] = fmt.Sprintf("2026-02-01T00:%02d:%02dZ", i/60, i%60)
			snap = replace(t, p, prevSnap, "http-routes", r)
		} else {
			r := benchmix.IngressObject(n + i)
			snap = replace(t, p, prevSnap, "ingresses", r)
		}
		prevSnap = snap
		t0 := time.Now()
		res, err := p.Engine.Render(context.Background(), render.Input{Snapshot: snap, ExtraContext: extra, LeaveOut: true})
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		full, why := validate.NeedsFullCheck(prev.Bundle, res.Bundle, p.Layout)
		t2 := time.Now()
		plan.Plan(plan.Running{Bundle: prev.Bundle}, res.Bundle, caps)
		t3 := time.Now()
		if i == 0 {
			t.Logf("full=%v %s", full, why)
		}
		tr += t1.Sub(t0)
		tv += t2.Sub(t1)
		tp += t3.Sub(t2)
		prev = res
	}
	t.Logf("render %v validate %v plan %v", tr/20, tv/20, tp/20)
}
