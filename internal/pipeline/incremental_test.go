package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/benchmix"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/store"
)

// mutator makes random create, update and delete changes to a live store holding the
// benchmark mix, with some variety the mix alone lacks (annotations, some invalid,
// not-ready endpoints, retargeted routes).
type mutator struct {
	rng  *rand.Rand
	kind benchmix.Kind
	live *store.Live
	next int // index of the next object to create
	// broken is an Ingress made invalid by the last change, fixed by the next (each
	// render with an invalid object diagnoses it anew, which is slow).
	broken int
}

var ingressAnnotations = []map[string]any{
	nil,
	{"haproxy-haptic.org/timeout-server": "2m"},
	{"haproxy-haptic.org/ssl-redirect": "true", "haproxy-haptic.org/load-balance": "leastconn"},
	{"haproxy-haptic.org/allowlist": "10.0.0.0/8, 192.168.1.1"},
	{"haproxy-haptic.org/request-set-header": "X-Team blue"},
}

// invalidAnnotation makes an Ingress fail the render: the engine leaves it out.
var invalidAnnotation = map[string]any{"haproxy-haptic.org/timeout-server": "forever"}

func (m *mutator) put(res string, obj map[string]any) error {
	_, err := m.live.Update(res, obj)
	return err
}

func (m *mutator) create() error {
	i := m.next
	m.next++
	route := benchmix.IngressObject(i)
	res := "ingresses"
	if m.kind == benchmix.HTTPRoute {
		route, res = m.stamped(benchmix.Route(i)), "http-routes"
	}
	for _, err := range []error{m.put(res, route), m.put("services", benchmix.Service(i)),
		m.put("endpoints", benchmix.EndpointSlice(i, 0)), m.put("endpoints", benchmix.EndpointSlice(i, 1))} {
		if err != nil {
			return err
		}
	}
	return nil
}

// change makes one random change to object i (which may not exist: then it creates
// or deletes nothing of consequence, as a watch event for an unknown object would).
func (m *mutator) change() error {
	if m.broken >= 0 {
		i := m.broken
		m.broken = -1
		return m.put("ingresses", benchmix.IngressObject(i))
	}
	if m.kind == benchmix.Ingress && m.next > 0 && m.rng.IntN(25) == 0 {
		m.broken = m.rng.IntN(m.next)
		r := benchmix.IngressObject(m.broken)
		r["metadata"].(map[string]any)["annotations"] = invalidAnnotation
		return m.put("ingresses", r)
	}
	if m.next == 0 || m.rng.IntN(8) == 0 {
		return m.create()
	}
	i := m.rng.IntN(m.next)
	other := m.rng.IntN(m.next)
	routeRes := "ingresses"
	if m.kind == benchmix.HTTPRoute {
		routeRes = "http-routes"
	}
	key := func(name string) string { return benchmix.Namespace + "/" + name }
	switch m.rng.IntN(9) {
	case 0: // delete the route
		m.live.Delete(routeRes, key(routeName(m.kind, i)))
	case 1: // delete an EndpointSlice
		m.live.Delete("endpoints", key(fmt.Sprintf("bench-svc-%d-%d", i, m.rng.IntN(2))))
	case 2: // delete the Service
		m.live.Delete("services", key(fmt.Sprintf("bench-svc-%d", i)))
	case 3: // re-create everything of i
		if err := m.put("services", benchmix.Service(i)); err != nil {
			return err
		}
		return m.put(routeRes, m.route(i))
	case 4: // an endpoint moves or becomes (not) ready
		s := benchmix.EndpointSlice(i, m.rng.IntN(2))
		ep := s["endpoints"].([]any)[0].(map[string]any)
		ep["addresses"] = []any{fmt.Sprintf("10.9.%d.%d", m.rng.IntN(4), m.rng.IntN(250))}
		ep["conditions"] = map[string]any{"ready": m.rng.IntN(3) > 0}
		return m.put("endpoints", s)
	case 5: // the Service's port changes name
		svc := benchmix.Service(i)
		if m.rng.IntN(2) == 0 {
			svc["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["name"] = "web"
		}
		return m.put("services", svc)
	default: // the route changes: host, annotations, or backend
		r := m.route(i)
		if m.rng.IntN(3) == 0 {
			retarget(m.kind, r, other)
		}
		return m.put(routeRes, r)
	}
	return nil
}

// route is route i with a random host and, for Ingresses, random annotations, now
// and then a spec.defaultBackend or a TLS entry.
func (m *mutator) route(i int) map[string]any {
	if m.kind == benchmix.HTTPRoute {
		r := m.stamped(benchmix.Route(i))
		r["spec"].(map[string]any)["hostnames"] = []any{fmt.Sprintf("h%d.example.com", m.rng.IntN(m.next+1))}
		return r
	}
	r := benchmix.IngressObject(i)
	if a := ingressAnnotations[m.rng.IntN(len(ingressAnnotations))]; a != nil {
		r["metadata"].(map[string]any)["annotations"] = a
	}
	spec := r["spec"].(map[string]any)
	rule := spec["rules"].([]any)[0].(map[string]any)
	rule["host"] = fmt.Sprintf("h%d.example.com", m.rng.IntN(m.next+1))
	switch m.rng.IntN(12) {
	case 0: // the catch-all backend (the first Ingress with one takes it)
		spec["defaultBackend"] = map[string]any{"service": map[string]any{"name": fmt.Sprintf("bench-svc-%d", i),
			"port": map[string]any{"number": int64(80)}}}
	case 1: // TLS with a Secret that is not there (noted, no certificate)
		spec["tls"] = []any{map[string]any{"hosts": []any{rule["host"]}, "secretName": fmt.Sprintf("tls-%d", m.rng.IntN(4))}}
	}
	return r
}

// stamped gives an HTTPRoute one of four creation times: the gateway library orders
// routes by it, and a route re-created with another moves.
func (m *mutator) stamped(r map[string]any) map[string]any {
	r["metadata"].(map[string]any)["creationTimestamp"] = fmt.Sprintf("2026-01-01T00:00:%02dZ", m.rng.IntN(4))
	return r
}

// retarget points a route's backends at Service j.
func retarget(kind benchmix.Kind, r map[string]any, j int) {
	name := fmt.Sprintf("bench-svc-%d", j)
	if kind == benchmix.HTTPRoute {
		for _, rule := range r["spec"].(map[string]any)["rules"].([]any) {
			rule.(map[string]any)["backendRefs"].([]any)[0].(map[string]any)["name"] = name
		}
		return
	}
	for _, p := range r["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["http"].(map[string]any)["paths"].([]any) {
		p.(map[string]any)["backend"].(map[string]any)["service"].(map[string]any)["name"] = name
	}
}

func routeName(kind benchmix.Kind, i int) string {
	if kind == benchmix.HTTPRoute {
		return fmt.Sprintf("bench-route-%d", i)
	}
	return fmt.Sprintf("bench-ing-%d", i)
}

// TestIncrementalEqualsFull renders a live store after each of 1,000 random change
// sequences twice, reusing earlier fragments and from scratch, with both default
// libraries: the bundles, the left-out objects and the notes must be identical. The
// render from scratch reads copies of the objects without their kept compact forms
// (the helpers make them from Raw again), so a form kept from an earlier version or
// altered by a render would show too.
func TestIncrementalEqualsFull(t *testing.T) {
	sequences := 1000
	if testing.Short() {
		sequences = 100
	}
	for _, kind := range benchKinds {
		t.Run(string(kind), func(t *testing.T) {
			p := benchPipeline(t, kind)
			m := &mutator{rng: rand.New(rand.NewPCG(1, uint64(len(kind)))), kind: kind, live: store.NewLive(p.Builder), broken: -1}
			for res, objs := range benchmix.Build(kind, 0) {
				for _, o := range objs {
					if err := m.put(res, o); err != nil {
						t.Fatal(err)
					}
				}
			}
			for range 20 {
				if err := m.create(); err != nil {
					t.Fatal(err)
				}
			}
			incremental := p.Engine
			full, err := p.compile()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			extra := benchExtra(kind)
			var reused render.Reuse
			var prev = m.live.Snapshot()
			for seq := range sequences {
				for range 1 + m.rng.IntN(3) {
					if err := m.change(); err != nil {
						t.Fatal(err)
					}
				}
				snap := m.live.Snapshot()
				in := render.Input{Snapshot: snap, ExtraContext: extra, LeaveOut: true, Suspects: snap.Changed(prev)}
				got, gotErr := incremental.Render(ctx, in)
				in.Fresh, in.Snapshot = true, withoutForms(snap)
				want, wantErr := full.Render(ctx, in)
				prev = snap
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("sequence %d: incremental error %v, full error %v", seq, gotErr, wantErr)
				}
				if wantErr != nil {
					continue
				}
				if fmt.Sprint(got.LeftOut) != fmt.Sprint(want.LeftOut) {
					t.Fatalf("sequence %d: left out %v incrementally, %v in full", seq, got.LeftOut, want.LeftOut)
				}
				if fmt.Sprint(got.Notes) != fmt.Sprint(want.Notes) {
					t.Fatalf("sequence %d: notes %v incrementally, %v in full", seq, got.Notes, want.Notes)
				}
				if len(got.Bundle.Files) != len(want.Bundle.Files) {
					t.Fatalf("sequence %d: %d files incrementally, %d in full", seq, len(got.Bundle.Files), len(want.Bundle.Files))
				}
				for i, f := range want.Bundle.Files {
					if g := got.Bundle.Files[i]; g.Target() != f.Target() || g.Content.String() != f.Content.String() {
						t.Fatalf("sequence %d: %s differs from a full render:\n--- incremental\n%s\n--- full\n%s", seq, f.Target(), g.Content.String(), f.Content.String())
					}
				}
				r := got.Reuse
				reused.Files += r.Files
				reused.Units += r.Units
				reused.Shared += r.Shared
			}
			t.Logf("%d sequences: reused %d files, %d shared values, %d units", sequences, reused.Files, reused.Shared, reused.Units)
			if reused.Files == 0 || (kind == benchmix.Ingress && reused.Shared == 0) {
				t.Errorf("no fragment was ever reused (%+v): the comparison proves nothing", reused)
			}
		})
	}
}

// withoutForms is snap with copies of its objects that keep no compact forms.
func withoutForms(snap *snapshot.Snapshot) *snapshot.Snapshot {
	out := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{}}
	for name, st := range snap.Stores {
		objs := append(slices.Clone(st.List()), st.Refused()...)
		for i := range objs {
			objs[i].Forms = nil
		}
		out.Stores[name] = snapshot.NewStore(st.Name, st.IndexBy, st.Type, objs)
	}
	return out
}
