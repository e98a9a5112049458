package render

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

func routeObject(ns, name string, created int) snapshot.Object {
	return snapshot.Object{Namespace: ns, Name: name, Raw: map[string]any{
		"metadata": map[string]any{"namespace": ns, "name": name, "creationTimestamp": fmt.Sprintf("2026-01-01T%08d", created)},
		"spec":     map[string]any{},
	}}
}

// TestRouteOrderFollowsItsStores: after random edits of two route stores (a few
// routes added, removed or replaced, now and then many; half of those put the
// newest), the kept order is the one made from nothing, and an order given before
// is left as it was (earlier renders' runs hold it), also when routes are appended
// to it.
func TestRouteOrderFollowsItsStores(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	storeKinds := []string{"grpc-routes", "GRPCRoute", "tcp-routes", "TCPRoute"}
	stores := []*snapshot.Store{snapshot.NewStore("grpc-routes", nil, nil, nil), snapshot.NewStore("tcp-routes", nil, nil, nil)}
	var kept routeOrder
	var given, was [][]string
	newest := 100
	for step := range 2000 {
		edits := 1 + rng.IntN(3)
		if step%50 == 0 {
			edits = 40
		}
		for range edits {
			i := rng.IntN(len(stores))
			name := fmt.Sprintf("r%d", rng.IntN(300))
			if rng.IntN(3) == 0 {
				stores[i] = stores[i].With(nil, []string{"ns/" + name})
			} else {
				created := rng.IntN(60)
				if rng.IntN(2) == 0 {
					newest++
					created = newest
				}
				stores[i] = stores[i].With([]snapshot.Object{routeObject("ns", name, created)}, nil)
			}
		}
		got := kept.update("k", stores, storeKinds)
		var fresh routeOrder
		if want := fresh.update("k", stores, storeKinds); !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: order %v, want %v", step, got, want)
		}
		if !reflect.DeepEqual(given, was) {
			t.Fatalf("step %d: an order given before was changed", step)
		}
		if step%2 == 0 { // (an order given two steps ago too)
			given, was = got, slices.Clone(got)
		}
	}
}
