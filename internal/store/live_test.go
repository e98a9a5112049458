package store

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// Proposed shows one change without touching the live stores.
func TestLiveProposed(t *testing.T) {
	l := NewLive(newBuilder(t, "typed"))
	for _, name := range []string{"a", "b"} {
		if _, err := l.Put("ingresses", ingress(t, "web", name, "haproxy")); err != nil {
			t.Fatal(err)
		}
	}
	changed := ingress(t, "web", "b", "haproxy")
	changed["metadata"].(map[string]any)["labels"] = map[string]any{"app": "changed"}
	snap, err := l.Proposed("ingresses", "web/b", changed)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range snap.Stores["ingresses"].List() {
		got[o.Key()] = o.Raw["metadata"].(map[string]any)["labels"].(map[string]any)["app"].(string)
	}
	if len(got) != 2 || got["web/a"] != "web" || got["web/b"] != "changed" {
		t.Fatalf("proposed update: %v", got)
	}
	if snap.Stores["services"] != l.Snapshot().Stores["services"] {
		t.Error("an unchanged resource's store was rebuilt")
	}

	snap, err = l.Proposed("ingresses", "web/a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if objs := snap.Stores["ingresses"].List(); len(objs) != 1 || objs[0].Key() != "web/b" {
		t.Fatalf("proposed delete left %v", objs)
	}
	snap, err = l.Proposed("ingresses", "web/c", ingress(t, "web", "c", "other"))
	if err != nil || snap != nil {
		t.Fatalf("an object the field selector rejects changes nothing, got %v %v", snap, err)
	}
	snap, err = l.Proposed("ingresses", "web/a", ingress(t, "web", "a", "other"))
	if err != nil || snap == nil || snap.Stores["ingresses"].Len() != 1 {
		t.Fatalf("moving a held object out of the class removes it: %v %v", snap, err)
	}
	if n := l.Len("ingresses"); n != 2 || l.Snapshot().Stores["ingresses"].Len() != 2 {
		t.Fatalf("the live store changed: %d", n)
	}
	if _, err := l.Proposed("nothing", "x/y", map[string]any{}); err == nil {
		t.Fatal("an unknown resource was accepted")
	}
}

// An object that arrives with the content admission rendered is stored as the
// proposed object itself (the render after it reuses what admission's memoized);
// any other content is admitted anew.
func TestLiveStoresTheProposedObject(t *testing.T) {
	l := NewLive(newBuilder(t, "typed"))
	if _, err := l.Put("ingresses", ingress(t, "web", "a", "haproxy")); err != nil {
		t.Fatal(err)
	}
	propose := func(name, app string) snapshot.Object {
		t.Helper()
		raw := ingress(t, "web", name, "haproxy")
		raw["metadata"].(map[string]any)["labels"] = map[string]any{"app": app}
		snap, err := l.Proposed("ingresses", "web/"+name, raw)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := snap.Object(snapshot.Ref{Resource: "ingresses", Key: "web/" + name})
		if !ok {
			t.Fatalf("web/%s not proposed", name)
		}
		return o
	}
	// What the watch brings: the proposal as stored, with server-kept metadata and
	// status.
	stored := func(name, app, rv string) map[string]any {
		raw := ingress(t, "web", name, "haproxy")
		meta := raw["metadata"].(map[string]any)
		meta["labels"] = map[string]any{"app": app}
		meta["resourceVersion"], meta["generation"] = rv, int64(1)
		raw["status"] = map[string]any{"loadBalancer": map[string]any{}}
		return raw
	}
	held := func(key string) snapshot.Object {
		o, _ := l.Snapshot().Object(snapshot.Ref{Resource: "ingresses", Key: key})
		return o
	}
	same := func(a, b snapshot.Object) bool {
		return reflect.ValueOf(a.Raw).UnsafePointer() == reflect.ValueOf(b.Raw).UnsafePointer()
	}

	created := propose("b", "new")
	if out, err := l.Update("ingresses", stored("b", "new", "41")); err != nil || out != Stored {
		t.Fatalf("created: %v %v", out, err)
	}
	if !same(held("web/b"), created) || !created.TypedValue().IsValid() {
		t.Fatal("the created object is not the proposed one")
	}
	// Consumed: the same content again is no change at all.
	if out, _ := l.Update("ingresses", stored("b", "new", "42")); out != Unchanged {
		t.Fatalf("a repeat of the stored content: %v", out)
	}

	updated := propose("a", "changed")
	if out, _ := l.Update("ingresses", stored("a", "other", "43")); out != Stored || same(held("web/a"), updated) {
		t.Fatalf("content other than the proposal's must be admitted anew (%v)", out)
	}
	if got := held("web/a").Raw["metadata"].(map[string]any)["labels"].(map[string]any)["app"]; got != "other" {
		t.Fatalf("stored label %v, want the watched one", got)
	}
	if out, _ := l.Update("ingresses", stored("a", "changed", "44")); out != Stored || same(held("web/a"), updated) {
		t.Fatalf("a proposal is used once, for the next event of its key (%v)", out)
	}

	for i := range maxProposed + 10 {
		propose(fmt.Sprintf("p%d", i), "x")
	}
	if n := len(l.proposed["ingresses"]); n == 0 || n > maxProposed {
		t.Fatalf("%d proposals remembered, want at most %d", n, maxProposed)
	}
}

// TestLiveFollowsItsChanges: over random puts (of this class, of another, which the
// field selector rejects), deletes, snapshots and a loader set in between, the live
// store holds what a map of the changes holds: its Len, and each snapshot's objects
// with their contents.
func TestLiveFollowsItsChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	l := NewLive(newBuilder(t, "typed"))
	model := map[string]string{} // key → label app
	for step := range 3000 {
		name := fmt.Sprintf("i%d", rng.IntN(40))
		key := "web/" + name
		switch r := rng.IntN(10); {
		case r < 5:
			raw := ingress(t, "web", name, "haproxy")
			app := fmt.Sprintf("v%d", rng.IntN(3))
			raw["metadata"].(map[string]any)["labels"] = map[string]any{"app": app}
			if _, err := l.Put("ingresses", raw); err != nil {
				t.Fatal(err)
			}
			model[key] = app
		case r < 6:
			if _, err := l.Put("ingresses", ingress(t, "web", name, "other")); err != nil {
				t.Fatal(err)
			}
			delete(model, key)
		case r < 8:
			if removed := l.Delete("ingresses", key); removed != (model[key] != "") {
				t.Fatalf("step %d: Delete(%s) = %v, held %v", step, key, removed, model[key] != "")
			}
			delete(model, key)
		case r < 9:
			l.SetOnDemand("ingresses", nil)
		}
		if n := l.Len("ingresses"); n != len(model) {
			t.Fatalf("step %d: Len %d, want %d", step, n, len(model))
		}
		if rng.IntN(4) > 0 {
			continue
		}
		got := map[string]string{}
		for _, o := range l.Snapshot().Stores["ingresses"].List() {
			got[o.Key()] = o.Raw["metadata"].(map[string]any)["labels"].(map[string]any)["app"].(string)
		}
		if !maps.Equal(got, model) {
			t.Fatalf("step %d: snapshot holds %v, want %v", step, got, model)
		}
	}
}
