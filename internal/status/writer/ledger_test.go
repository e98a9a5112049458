package writer

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

func gatewayObject(ns, name, uid string, gen int64) snapshot.Object {
	return snapshot.Object{Namespace: ns, Name: name, Raw: map[string]any{
		"metadata": map[string]any{"namespace": ns, "name": name, "uid": uid, "generation": gen}}}
}

// TestRenderedGateways: a bundle is recorded as made from the Gateways the rendered
// snapshot holds, at the object and generation it holds — not from what the status
// writer's informer (ahead of the stores) already sees.
func TestRenderedGateways(t *testing.T) {
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	c := types.NamespacedName{Namespace: "ns", Name: "c"}
	snap := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{
		"gateways": snapshot.NewStore("gateways", nil, nil, []snapshot.Object{
			gatewayObject("ns", "a", "uid-a", 2), gatewayObject("ns", "c", "uid-c-old", 4)}),
	}}
	// The writer sees a newer a, b (not in the stores yet), and c created again.
	want := map[types.NamespacedName]Revision{a: {UID: "uid-a", Generation: 3}, b: {UID: "uid-b", Generation: 1},
		c: {UID: "uid-c-new", Generation: 1}}
	for _, tc := range []struct {
		name   string
		stores []string
		snap   *snapshot.Snapshot
		want   map[types.NamespacedName]Revision
	}{
		{name: "as the snapshot holds them", stores: []string{"gateways"}, snap: snap,
			want: map[types.NamespacedName]Revision{a: {UID: "uid-a", Generation: 2}, c: {UID: "uid-c-old", Generation: 4}}},
		{name: "no Gateway store: as the writer sees them", snap: snap, want: want},
		{name: "an empty store", stores: []string{"gateways"},
			snap: &snapshot.Snapshot{Stores: map[string]*snapshot.Store{"gateways": snapshot.NewStore("gateways", nil, nil, nil)}},
			want: map[types.NamespacedName]Revision{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RenderedGateways(want, tc.stores, tc.snap); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLedgerKeepsEveryRenderOfAHash(t *testing.T) {
	var l Ledger
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	l.Rendered("same", map[types.NamespacedName]Revision{a: {UID: "uid-a", Generation: 1}})
	l.Rendered("same", map[types.NamespacedName]Revision{b: {UID: "uid-b", Generation: 1}})
	l.Rendered("same", map[types.NamespacedName]Revision{a: {UID: "uid-a", Generation: 0}}) // older: kept at 1
	onlyA := func(gw types.NamespacedName) bool { return gw == a }
	if got := l.Deployed("same", onlyA); fmt.Sprint(got) != fmt.Sprint(map[types.NamespacedName]Revision{a: {UID: "uid-a", Generation: 1}}) {
		t.Fatalf("deployed %v", got)
	}
	for i := range ledgerKept {
		l.Rendered(fmt.Sprint(i), nil)
	}
	if got := l.Deployed("same", func(types.NamespacedName) bool { return true }); len(got) != 0 {
		t.Fatalf("a bundle older than %d renders is still known: %v", ledgerKept, got)
	}
}
