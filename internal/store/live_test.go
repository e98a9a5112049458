package store

import "testing"

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
