package snapshot

import (
	"fmt"
	"testing"
)

// A store version searched often finds its objects in a map: the same answers as
// the binary search, for held objects, missing ones and cluster-scoped names.
func TestKeyLookupAnswersAsTheSearch(t *testing.T) {
	var objs []Object
	for i := range 300 {
		objs = append(objs, obj(fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("svc-%d", i), nil))
	}
	objs = append(objs, obj("", "cluster-wide", nil))
	s := NewStore("services", nil, nil, objs)
	check := func() {
		t.Helper()
		for _, o := range objs {
			got, err := s.Fetch(o.Namespace, o.Name)
			if err != nil || len(got) != 1 || got[0].Key() != o.Key() {
				t.Fatalf("Fetch %s: %v %v", o.Key(), keys(got), err)
			}
		}
		for _, k := range [][2]string{{"ns-1", "svc-0"}, {"ns-9", "svc-1"}, {"", "svc-1"}} {
			if got, _ := s.Fetch(k[0], k[1]); len(got) != 0 {
				t.Fatalf("Fetch %v: %v, want nothing", k, keys(got))
			}
		}
	}
	check()
	if s.lookup.index.Load() == nil {
		t.Fatalf("no map after %d searches of %d objects", s.lookup.searches.Load(), len(objs))
	}
	check() // now from the map

	// With finds the places of what it puts and drops in the map too.
	with := s.With([]Object{obj("ns-0", "svc-new", nil)}, []string{"ns-1/svc-1"})
	if got, _ := with.Fetch("ns-0", "svc-new"); len(got) != 1 {
		t.Fatal("With lost the object put")
	}
	if got, _ := with.Fetch("ns-1", "svc-1"); len(got) != 0 {
		t.Fatal("With kept the object dropped")
	}
	if len(with.Keys()) != len(objs) {
		t.Fatalf("With holds %d objects, want %d", len(with.Keys()), len(objs))
	}
}

// A version searched a few times (the render of a change) makes no map.
func TestKeyLookupWaitsForSearches(t *testing.T) {
	var objs []Object
	for i := range 2000 {
		objs = append(objs, obj("ns", fmt.Sprintf("svc-%d", i), nil))
	}
	s := NewStore("services", nil, nil, objs)
	for _, o := range objs[:128] {
		if got, _ := s.Fetch(o.Namespace, o.Name); len(got) != 1 {
			t.Fatalf("Fetch %s: %v", o.Key(), keys(got))
		}
	}
	if s.lookup.index.Load() != nil {
		t.Fatal("a map of 2,000 objects made for 128 searches")
	}
}
