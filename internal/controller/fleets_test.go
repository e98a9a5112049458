package controller

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/status/writer"
)

// TestProgrammedPerFleet: fleets that render an identical bundle (e.g. two new
// Gateways before the stores hold them) keep what each rendered; a deploy to one
// fleet's pod programs only the Gateways that fleet serves.
func TestProgrammedPerFleet(t *testing.T) {
	it := &iteration{c: &Controller{status: writer.New(writer.Options{})}, cfg: &v1alpha1.HAProxyTemplateConfig{}}
	it.cfg.Spec.Gateways.Provisioning = v1alpha1.GatewaysPerGateway
	def := &fleet{}
	a := &fleet{gateway: types.NamespacedName{Namespace: "ns", Name: "a"}}
	b := &fleet{gateway: types.NamespacedName{Namespace: "ns", Name: "b"}}
	revs := func(f *fleet, uid string, gen int64) map[types.NamespacedName]writer.Revision {
		return map[types.NamespacedName]writer.Revision{f.gateway: {UID: types.UID(uid), Generation: gen}}
	}
	it.statusRendered("same", revs(a, "uid-a", 1))
	it.statusRendered("same", revs(b, "uid-b", 1))
	it.statusDeployed(def, deploy.Outcome{Pod: "haproxy-0", Hash: "same"})
	if len(it.fleets.programmed) != 0 {
		t.Fatalf("a deploy to the podSelector's pod programmed %v", it.fleets.programmed)
	}
	it.statusDeployed(a, deploy.Outcome{Pod: "haproxy-gw-a-0", Hash: "same"})
	if got, want := fmt.Sprint(it.fleets.programmed), fmt.Sprint(revs(a, "uid-a", 1)); got != want {
		t.Fatalf("programmed = %s, want %s", got, want)
	}
	// A later deploy of an older bundle of the same object does not go back; a
	// Gateway created again under the name replaces the record.
	it.statusRendered("newer", revs(a, "uid-a", 2))
	it.statusRendered("recreated", revs(a, "uid-a2", 1))
	it.statusDeployed(a, deploy.Outcome{Hash: "newer"})
	it.statusDeployed(a, deploy.Outcome{Hash: "same"})
	if got := it.fleets.programmed[a.gateway]; got != (writer.Revision{UID: "uid-a", Generation: 2}) {
		t.Fatalf("after an older deploy: %+v", got)
	}
	it.statusDeployed(a, deploy.Outcome{Hash: "recreated"})
	if got := it.fleets.programmed[a.gateway]; got != (writer.Revision{UID: "uid-a2", Generation: 1}) {
		t.Fatalf("after the new object's deploy: %+v", got)
	}
	// Shared: the podSelector's pods serve every Gateway.
	it.cfg.Spec.Gateways.Provisioning = v1alpha1.GatewaysShared
	it.statusDeployed(def, deploy.Outcome{Hash: "same"})
	if got := it.fleets.programmed[b.gateway]; got != (writer.Revision{UID: "uid-b", Generation: 1}) {
		t.Fatalf("shared: %+v", it.fleets.programmed)
	}
}

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
	want := map[types.NamespacedName]writer.Revision{a: {UID: "uid-a", Generation: 3}, b: {UID: "uid-b", Generation: 1},
		c: {UID: "uid-c-new", Generation: 1}}
	for _, tc := range []struct {
		name   string
		stores []string
		snap   *snapshot.Snapshot
		want   map[types.NamespacedName]writer.Revision
	}{
		{name: "as the snapshot holds them", stores: []string{"gateways"}, snap: snap,
			want: map[types.NamespacedName]writer.Revision{a: {UID: "uid-a", Generation: 2}, c: {UID: "uid-c-old", Generation: 4}}},
		{name: "no Gateway store: as the writer sees them", snap: snap, want: want},
		{name: "an empty store", stores: []string{"gateways"},
			snap: &snapshot.Snapshot{Stores: map[string]*snapshot.Store{"gateways": snapshot.NewStore("gateways", nil, nil, nil)}},
			want: map[types.NamespacedName]writer.Revision{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := renderedGateways(want, tc.stores, tc.snap); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
