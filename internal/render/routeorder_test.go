package render

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

func deepClone(order [][]string) [][]string {
	out := make([][]string, len(order))
	for i, item := range order {
		out[i] = slices.Clone(item)
	}
	return out
}

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
	var given, was [][][]string
	newest := 100
	check := func(step int) {
		t.Helper()
		got := kept.update("k", stores, storeKinds)
		var fresh routeOrder
		if want := fresh.update("k", stores, storeKinds); !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: order %v, want %v", step, got, want)
		}
		for i, g := range given {
			if !reflect.DeepEqual(g, was[i]) {
				t.Fatalf("step %d: an order given before was changed", step)
			}
		}
		if given = append(given, got); len(given) > 4 { // (the last orders given)
			given = given[1:]
		}
		if was = append(was, deepClone(got)); len(was) > 4 {
			was = was[1:]
		}
	}
	for step := range 2000 {
		edits := 1 + rng.IntN(3)
		if step%50 == 0 {
			edits = 40
		}
		switch rng.IntN(8) {
		case 0: // the newest route goes, and comes back or another comes (the order
			// is cut short, then appended to over its old items)
			if last := lastRoute(kept); last != nil {
				i := slices.Index(storeKinds, last[0]) / 2
				stores[i] = stores[i].With(nil, []string{last[1] + "/" + last[2]})
				check(step)
				if rng.IntN(2) == 0 {
					newest++
					last[2] = fmt.Sprintf("r%d", 300+rng.IntN(3))
				}
				stores[i] = stores[i].With([]snapshot.Object{routeObject("ns", last[2], newest)}, nil)
			}
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
		check(step)
	}
}

// lastRoute is the newest route of an order (a copy), nil when it has none.
func lastRoute(r routeOrder) []string {
	if len(r.out) == 0 {
		return nil
	}
	return slices.Clone(r.out[len(r.out)-1])
}
