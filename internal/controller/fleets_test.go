package controller

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/status/writer"
)

// TestProgrammedPerFleet: fleets that render an identical bundle (e.g. two new
// Gateways before the stores hold them) keep what each rendered; a deploy to one
// fleet's pod programs only the Gateways that fleet serves.
func TestProgrammedPerFleet(t *testing.T) {
	status := writer.New(writer.Options{})
	it := &iteration{d: deps{status: status}, fleets: fleetSet{perGateway: true, status: status}}
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
	it.fleets.perGateway = false
	it.statusDeployed(def, deploy.Outcome{Hash: "same"})
	if got := it.fleets.programmed[b.gateway]; got != (writer.Revision{UID: "uid-b", Generation: 1}) {
		t.Fatalf("shared: %+v", it.fleets.programmed)
	}
}
