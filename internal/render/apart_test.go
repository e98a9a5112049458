package render

import (
	"fmt"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// TestComputeApart: values computed apart come back in order, each with the reads it
// made and nothing else's, and a computation's panic is raised where its value is
// taken (the ones before it are taken as usual).
func TestComputeApart(t *testing.T) {
	var objs []snapshot.Object
	for i := range 200 {
		objs = append(objs, snapshot.Object{Namespace: "ns", Name: fmt.Sprint(i), Raw: map[string]any{
			"metadata": map[string]any{"namespace": "ns", "name": fmt.Sprint(i)}}})
	}
	snap := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{
		"things": snapshot.NewStore("things", indexPaths("metadata.namespace", "metadata.name"), nil, objs)}}
	st := &renderState{snapshot: snap, rec: newRecorder("haproxy.cfg", newOutput(0))}
	out := computeApart(st, 200, func(i int, rd reader) string {
		got := rd.getSingle("things", []string{"ns", fmt.Sprint(i)})
		rd.getSingle("things", []string{"ns", fmt.Sprint(i)}) // asked again: one read
		if i == 150 {
			panic("stop at 150")
		}
		return got[0].Name
	})
	for i := range 150 {
		if v := out[i].take(); v != fmt.Sprint(i) {
			t.Fatalf("value %d: %q", i, v)
		}
		if r := out[i].deps.reads; len(r) != 1 || snapshot.KeysOf(r[0].ikey)[1] != fmt.Sprint(i) {
			t.Fatalf("value %d read %v", i, r)
		}
	}
	defer func() {
		if p := recover(); p != "stop at 150" {
			t.Fatalf("taking value 150 raised %v", p)
		}
	}()
	out[150].take()
	t.Fatal("taking value 150 did not panic")
}
