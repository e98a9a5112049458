package pipeline

import (
	"context"
	"fmt"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/benchmix"
	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/plan"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// defaultLibraries are the files the performance guide measures: the chart's base
// library, the route library, and the local deployment's overlay.
func defaultLibraries(kind benchmix.Kind) []string {
	lib := "ingress"
	if kind == benchmix.HTTPRoute {
		lib = "gateway"
	}
	return []string{"../../charts/haptic/libraries/base.yaml", "../../charts/haptic/libraries/" + lib + ".yaml",
		"../../deploy/local/30-haptic-overlay.yaml"}
}

// benchExtra is the extraContext a fleet renders with.
func benchExtra(kind benchmix.Kind) map[string]any {
	if kind == benchmix.HTTPRoute {
		return map[string]any{"gateway": benchmix.Namespace + "/bench-gw", "gatewayControllerName": "haproxy-haptic.org/controller"}
	}
	return map[string]any{}
}

func benchPipeline(tb testing.TB, kind benchmix.Kind) *Pipeline {
	tb.Helper()
	cfg, err := config.LoadFiles(defaultLibraries(kind)...)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := New(cfg, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func benchSnapshot(tb testing.TB, p *Pipeline, kind benchmix.Kind, n int) *snapshot.Snapshot {
	tb.Helper()
	snap, err := p.Builder.Snapshot(benchmix.Build(kind, n))
	if err != nil {
		tb.Fatal(err)
	}
	return snap
}

var benchKinds = []benchmix.Kind{benchmix.Ingress, benchmix.HTTPRoute}

// benchSizes are the object counts the store, render and plan benchmarks run at:
// 1,000 and 5,000, or HAPTIC_BENCH_SIZES (e.g. "50000", a comma-separated list).
func benchSizes(tb testing.TB) []int { return sizesFrom(tb, "HAPTIC_BENCH_SIZES", 1000, 5000) }

// sizesFrom is the comma-separated counts of environment variable env, or
// otherwise when it is not set.
func sizesFrom(tb testing.TB, env string, otherwise ...int) []int {
	if os.Getenv(env) == "" {
		return otherwise
	}
	var out []int
	for _, f := range strings.Split(os.Getenv(env), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			tb.Fatalf("%s: %q is not a count", env, f)
		}
		out = append(out, n)
	}
	return out
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the CPU time per iteration (garbage collection included) since start:
// on a shared machine it varies less than the wall time.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkStore admits the mix into a snapshot (the store stage).
func BenchmarkStore(b *testing.B) {
	for _, kind := range benchKinds {
		p := benchPipeline(b, kind)
		for _, n := range benchSizes(b) {
			b.Run(fmt.Sprintf("%s/n=%d", kind, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := p.Builder.Snapshot(benchmix.Build(kind, n)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRender renders the mix in full: every call starts from an empty cache
// (Fresh), on the one admitted snapshot (its objects' compact forms made).
func BenchmarkRender(b *testing.B) {
	benchFullRenders(b, false)
}

// BenchmarkRenderNewObjects is BenchmarkRender on a snapshot admitted anew for each
// render (its admission untimed): objects no render has read yet, as the first render
// after a start sees them.
func BenchmarkRenderNewObjects(b *testing.B) {
	benchFullRenders(b, true)
}

func benchFullRenders(b *testing.B, newObjects bool) {
	for _, kind := range benchKinds {
		p := benchPipeline(b, kind)
		for _, n := range benchSizes(b) {
			snap := benchSnapshot(b, p, kind, n)
			b.Run(fmt.Sprintf("%s/n=%d", kind, n), func(b *testing.B) {
				b.ReportAllocs()
				start := cpuTime()
				for b.Loop() {
					if newObjects {
						b.StopTimer()
						snap = benchSnapshot(b, p, kind, n)
						b.StartTimer()
					}
					// (labelled: a CPU profile can focus on the renders, docs/rendering.md)
					pprof.Do(context.Background(), pprof.Labels("phase", "render"), func(ctx context.Context) {
						if _, err := p.Engine.Render(ctx, render.Input{Snapshot: snap, ExtraContext: benchExtra(kind), Fresh: true}); err != nil {
							b.Fatal(err)
						}
					})
				}
				if !newObjects { // (the process's CPU time would count the admissions too)
					reportCPU(b, start)
				}
			})
		}
	}
}

// BenchmarkPlan plans the deployment of a render against the previous one: after
// one route changed (a new version with the same content), and after each of a
// chain of EndpointSlice changes, as a fleet's changes come (each planned against
// what the plan before made to run): an address moved (haproxy.cfg differs in one
// server line), an address added (a server line added: the lines after it move), and
// a route added with its Service (its backend run from a pool slot, the maps that name
// it translated; every 32nd a reload, when the slots are taken).
func BenchmarkPlan(b *testing.B) {
	caps, err := plan.CapabilitiesFor("2.6.12")
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range benchKinds {
		p := benchPipeline(b, kind)
		extra := benchExtra(kind)
		for _, n := range benchSizes(b) {
			snap := benchSnapshot(b, p, kind, n)
			before, err := p.Engine.Render(context.Background(), render.Input{Snapshot: snap, ExtraContext: extra})
			if err != nil {
				b.Fatal(err)
			}
			after, err := p.Engine.Render(context.Background(), render.Input{Snapshot: changeOne(b, p, snap, kind, n/2), ExtraContext: extra})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/n=%d/route", kind, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					plan.Plan(plan.Running{Bundle: before.Bundle}, after.Bundle, caps)
				}
			})
			// chain plans the renders of step's snapshots, one after another (a change
			// that needs a reload fails it unless reloads).
			chain := func(name string, reloads bool, step func(s *snapshot.Snapshot, i int) *snapshot.Snapshot) {
				b.Run(fmt.Sprintf("%s/n=%d/%s", kind, n, name), func(b *testing.B) {
					running, s, i := plan.Running{Bundle: before.Bundle}, snap, 0
					b.ReportAllocs()
					for b.Loop() {
						b.StopTimer()
						s = step(s, i)
						next, err := p.Engine.Render(context.Background(), render.Input{Snapshot: s, ExtraContext: extra})
						if err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						res := plan.Plan(running, next.Bundle, caps)
						switch {
						case res.Running != nil:
							running = *res.Running
						case reloads: // (the pods reloaded: they run the render)
							running = plan.Running{Bundle: next.Bundle}
						default:
							b.Fatalf("change %d needs a reload: %v", i, res.Reasons)
						}
						i++
					}
				})
			}
			addr := func(i int) string { return fmt.Sprintf("10.99.%d.%d", i/250%250, i%250) }
			chain("endpoints", false, func(s *snapshot.Snapshot, i int) *snapshot.Snapshot {
				return moveEndpointTo(b, p, s, i%n, addr(i)) // a server line changed
			})
			chain("endpoints-added", false, func(s *snapshot.Snapshot, i int) *snapshot.Snapshot {
				return moveEndpointTo(b, p, s, i%n, endpointAddress(i%n), addr(i)) // a server line added
			})
			chain("routes-added", true, func(s *snapshot.Snapshot, i int) *snapshot.Snapshot {
				return addOne(b, p, s, kind, n+i) // a backend into a pool slot, its lines into the maps
			})
		}
	}
}

// changeOne returns snap with route i as a new version (equal content, a new
// object: what an update the templates do not see looks like to the engine).
func changeOne(tb testing.TB, p *Pipeline, snap *snapshot.Snapshot, kind benchmix.Kind, i int) *snapshot.Snapshot {
	res, route := "ingresses", benchmix.IngressObject(i)
	if kind == benchmix.HTTPRoute {
		res, route = "http-routes", benchmix.Route(i)
	}
	return replace(tb, p, snap, res, route)
}

// addOne returns snap with route (or Ingress) i added, with its Service and
// EndpointSlices: for i = n a name that sorts amid the others' (bench-route-5000
// after bench-route-500), as a route a user adds mostly does.
func addOne(tb testing.TB, p *Pipeline, snap *snapshot.Snapshot, kind benchmix.Kind, i int) *snapshot.Snapshot {
	objects := backendOf(i)
	res, route := routeOf(kind, i)
	objects[res] = []map[string]any{route}
	return add(tb, p, snap, objects)
}

// addBackendOf returns snap with route i's Service and EndpointSlices (not the route).
func addBackendOf(tb testing.TB, p *Pipeline, snap *snapshot.Snapshot, i int) *snapshot.Snapshot {
	return add(tb, p, snap, backendOf(i))
}

// backendOf is route i's Service and EndpointSlices, by watched resource.
func backendOf(i int) map[string][]map[string]any {
	return map[string][]map[string]any{"services": {benchmix.Service(i)},
		"endpoints": {benchmix.EndpointSlice(i, 0), benchmix.EndpointSlice(i, 1)}}
}

// routeOf is the watched resource of kind's routes and route i.
func routeOf(kind benchmix.Kind, i int) (string, map[string]any) {
	if kind == benchmix.HTTPRoute {
		return "http-routes", benchmix.Route(i)
	}
	return "ingresses", benchmix.IngressObject(i)
}

// add returns snap with objects added, by watched resource.
func add(tb testing.TB, p *Pipeline, snap *snapshot.Snapshot, objects map[string][]map[string]any) *snapshot.Snapshot {
	tb.Helper()
	with := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{}}
	var refs []snapshot.Ref
	for r, raws := range objects {
		var objs []snapshot.Object
		for _, raw := range raws {
			obj, _, err := p.Builder.Admit(r, raw)
			if err != nil {
				tb.Fatal(err)
			}
			objs = append(objs, obj)
			refs = append(refs, snapshot.Ref{Resource: r, Key: obj.Key()})
		}
		with.Stores[r] = p.Builder.NewStore(r, objs)
	}
	return snap.Revert(with, refs...)
}

// moveEndpoint returns snap with EndpointSlice (i, 0)'s address changed.
func moveEndpoint(tb testing.TB, p *Pipeline, snap *snapshot.Snapshot, i int) *snapshot.Snapshot {
	return moveEndpointTo(tb, p, snap, i, "10.99.0.1")
}

// moveEndpointTo returns snap with EndpointSlice (i, 0)'s addresses addrs.
func moveEndpointTo(tb testing.TB, p *Pipeline, snap *snapshot.Snapshot, i int, addrs ...string) *snapshot.Snapshot {
	s := benchmix.EndpointSlice(i, 0)
	s["endpoints"].([]any)[0].(map[string]any)["addresses"] = anySlice(addrs)
	return replace(tb, p, snap, "endpoints", s)
}

// endpointAddress is EndpointSlice (i, 0)'s address in the mix.
func endpointAddress(i int) string {
	return benchmix.EndpointSlice(i, 0)["endpoints"].([]any)[0].(map[string]any)["addresses"].([]any)[0].(string)
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func replace(tb testing.TB, p *Pipeline, snap *snapshot.Snapshot, res string, raw map[string]any) *snapshot.Snapshot {
	tb.Helper()
	obj, _, err := p.Builder.Admit(res, raw)
	if err != nil {
		tb.Fatal(err)
	}
	return snap.Revert(&snapshot.Snapshot{Stores: map[string]*snapshot.Store{res: p.Builder.NewStore(res, []snapshot.Object{obj})}},
		snapshot.Ref{Resource: res, Key: obj.Key()})
}

// settle runs step (a change rendered, alternating with its reverse) until the
// collector has run settleCycles times. A controller meets a change with its heap
// grown to the size it keeps; a benchmark timed right after building its snapshot
// measures that growth instead: at 50,000 routes the first hundred renders fault in
// about 4,000 fresh pages each and take from 1.3 to 3 times as long as the renders
// after them.
func settle(step func(context.Context)) {
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	cycles := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	for from, i := cycles(), 0; cycles()-from < settleCycles && i < settleMaxSteps; i++ {
		step(context.Background())
	}
}

const settleCycles, settleMaxSteps = 6, 2000

// BenchmarkRerender renders after one object changed (a route, an EndpointSlice,
// a route added to the Service it names) or a route was added with its Service and
// two EndpointSlices: each iteration alternates between two snapshots that differ
// in that, so every render reuses what the previous one memoized except what the
// change touches. The renders are timed once the heap has settled (settle).
func BenchmarkRerender(b *testing.B) {
	for _, kind := range benchKinds {
		p := benchPipeline(b, kind)
		for _, n := range benchSizes(b) {
			snap := benchSnapshot(b, p, kind, n)
			withBackend := addBackendOf(b, p, snap, n) // (a route added alone: its Service there before)
			res, route := routeOf(kind, n)
			for _, c := range []struct {
				name       string
				from, next *snapshot.Snapshot
			}{
				{"route", snap, changeOne(b, p, snap, kind, n/2)},
				{"endpoints", snap, moveEndpoint(b, p, snap, n/2)},
				{"added", snap, addOne(b, p, snap, kind, n)},
				{"route-added", withBackend, replace(b, p, withBackend, res, route)},
			} {
				b.Run(fmt.Sprintf("%s/n=%d/%s", kind, n, c.name), func(b *testing.B) {
					snaps := []*snapshot.Snapshot{c.from, c.next}
					extra := benchExtra(kind)
					if _, err := p.Engine.Render(context.Background(), render.Input{Snapshot: c.from, ExtraContext: extra}); err != nil {
						b.Fatal(err)
					}
					i := 0
					step := func(ctx context.Context) {
						i++
						if _, err := p.Engine.Render(ctx, render.Input{Snapshot: snaps[i%2], ExtraContext: extra}); err != nil {
							b.Fatal(err)
						}
					}
					settle(step)
					b.ReportAllocs()
					start := cpuTime()
					pprof.Do(context.Background(), pprof.Labels("phase", "changes"), func(ctx context.Context) {
						for b.Loop() {
							step(ctx)
						}
					})
					reportCPU(b, start)
				})
			}
		}
	}
}

// BenchmarkProbeChange is one step of the probe benchmarks offline: a route in the
// probe's shape (an HTTPRoute on one Gateway, or an Ingress) is added to n others,
// rendered and planned against what the pods run after the one before; each
// iteration adds another, so that no render or plan meets content it saw before.
// Its cost at 3,000 against 500 is the flatness #13 of the change-latency work
// measures.
func BenchmarkProbeChange(b *testing.B) {
	caps, err := plan.CapabilitiesFor("2.6.12")
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range benchKinds {
		p := benchPipeline(b, kind)
		extra := benchExtra(kind)
		for _, n := range sizesFrom(b, "HAPTIC_PROBE_SIZES", 500, 3000) { // (500 and 3,000: the flatness #13 measures)
			build, res, probe := benchmix.BuildProbe, "http-routes", benchmix.ProbeRoute
			if kind == benchmix.Ingress {
				build, res, probe = benchmix.BuildProbeIngress, "ingresses", benchmix.ProbeIngress
			}
			snap, err := p.Builder.Snapshot(build(n))
			if err != nil {
				b.Fatal(err)
			}
			running := probeRunning(b, p, caps, extra, build, snap)
			next := func(s *snapshot.Snapshot, i int) *snapshot.Snapshot { return replace(b, p, s, res, probe(n+i)) }
			benchProbeStep(b, fmt.Sprintf("%s/n=%d", kind, n), p, caps, extra, running, snap, next)
		}
	}
}

// probeRunning is what the probe's pods run when snap's routes have come one after
// another: they started without routes, so the routes' backends went into pool
// slots (plan aliases them), and every plan since translates the maps that name
// them.
func probeRunning(b *testing.B, p *Pipeline, caps plan.Capabilities, extra map[string]any, build func(int) benchmix.Objects, snap *snapshot.Snapshot) plan.Running {
	running := plan.Running{}
	for i, objs := range []benchmix.Objects{build(0), build(1), nil} {
		s := snap
		if objs != nil {
			var err error
			if s, err = p.Builder.Snapshot(objs); err != nil {
				b.Fatal(err)
			}
		}
		out, err := p.Engine.Render(context.Background(), render.Input{Snapshot: s, ExtraContext: extra})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			running.Bundle = out.Bundle
			continue
		}
		res := plan.Plan(running, out.Bundle, caps)
		if res.Running == nil {
			b.Fatalf("the probe's routes up to %d need a reload", i)
		}
		running = *res.Running
	}
	return running
}

// benchProbeStep renders the snapshots next makes from snap, one after another,
// and plans each against what the pods run after the one before.
func benchProbeStep(b *testing.B, name string, p *Pipeline, caps plan.Capabilities, extra map[string]any,
	running plan.Running, snap *snapshot.Snapshot, next func(*snapshot.Snapshot, int) *snapshot.Snapshot) {
	b.Run(name, func(b *testing.B) {
		snaps := make([]*snapshot.Snapshot, b.N)
		for i, s := 0, snap; i < b.N; i++ {
			s = next(s, i)
			snaps[i] = s
		}
		if _, err := p.Engine.Render(context.Background(), render.Input{Snapshot: snap, ExtraContext: extra}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		var renderTime, planTime time.Duration
		start := cpuTime()
		for _, s := range snaps {
			t0 := time.Now()
			var cur *render.Result
			pprof.Do(context.Background(), pprof.Labels("phase", "render"), func(ctx context.Context) {
				var err error
				if cur, err = p.Engine.Render(ctx, render.Input{Snapshot: s, ExtraContext: extra}); err != nil {
					b.Fatal(err)
				}
			})
			t1 := time.Now()
			var res plan.Result
			pprof.Do(context.Background(), pprof.Labels("phase", "plan"), func(context.Context) { res = plan.Plan(running, cur.Bundle, caps) })
			renderTime, planTime = renderTime+t1.Sub(t0), planTime+time.Since(t1)
			if res.Running == nil {
				b.Fatal("a probe step needs a reload")
			}
			running = *res.Running
		}
		reportCPU(b, start)
		b.ReportMetric(float64(renderTime)/float64(time.Millisecond)/float64(b.N), "render-ms/op")
		b.ReportMetric(float64(planTime)/float64(time.Millisecond)/float64(b.N), "plan-ms/op")
	})
}
