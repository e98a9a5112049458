package store

import (
	"testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

func meta(raw map[string]any) map[string]any { return raw["metadata"].(map[string]any) }

// withStatus is an Ingress as the API server sends it: bookkeeping metadata and status.
func withStatus(t *testing.T, ip string) map[string]any {
	raw := ingress(t, "web", "a", "haproxy")
	m := meta(raw)
	m["resourceVersion"] = "100"
	m["generation"] = int64(1)
	raw["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": ip}}}}
	return raw
}

// An update that changes only what templates cannot see is dropped: nothing is
// admitted and the store is not rebuilt. Any other change is stored.
func TestLiveUpdateDropsIrrelevantChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(raw map[string]any)
		want   Outcome
	}{
		{"status", func(r map[string]any) { r["status"] = map[string]any{"loadBalancer": map[string]any{}} }, Unchanged},
		{"status removed", func(r map[string]any) { delete(r, "status") }, Unchanged},
		{"resourceVersion", func(r map[string]any) { meta(r)["resourceVersion"] = "101" }, Unchanged},
		{"generation", func(r map[string]any) { meta(r)["generation"] = int64(2) }, Unchanged},
		{"managedFields", func(r map[string]any) {
			meta(r)["managedFields"] = []any{map[string]any{"manager": "haptic", "operation": "Update", "subresource": "status"}}
		}, Unchanged},
		{"last-applied", func(r map[string]any) {
			meta(r)["annotations"].(map[string]any)[lastApplied] = `{"other":"blob"}`
		}, Unchanged},
		{"everything server-kept at once", func(r map[string]any) {
			r["status"] = map[string]any{}
			m := meta(r)
			m["resourceVersion"], m["generation"] = "102", int64(3)
			delete(m, "managedFields")
		}, Unchanged},
		{"label", func(r map[string]any) { meta(r)["labels"].(map[string]any)["app"] = "other" }, Stored},
		{"label added", func(r map[string]any) { meta(r)["labels"].(map[string]any)["tier"] = "front" }, Stored},
		{"annotation", func(r map[string]any) { meta(r)["annotations"].(map[string]any)["haproxy.org/keep"] = "no" }, Stored},
		{"annotation removed", func(r map[string]any) { delete(meta(r)["annotations"].(map[string]any), "haproxy.org/keep") }, Stored},
		{"spec", func(r map[string]any) {
			r["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["host"] = "b.example.com"
		}, Stored},
		{"spec number", func(r map[string]any) {
			r["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["http"].(map[string]any)["paths"].([]any)[0].(map[string]any)["backend"].(map[string]any)["service"].(map[string]any)["port"] = map[string]any{"number": int64(81)}
		}, Stored},
		{"deletionTimestamp", func(r map[string]any) { meta(r)["deletionTimestamp"] = "2026-01-01T00:00:00Z" }, Stored},
		{"leaves the class", func(r map[string]any) { r["spec"].(map[string]any)["ingressClassName"] = "other" }, Removed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLive(newBuilder(t, v1alpha1.AccessTyped))
			if o, err := l.Update("ingresses", withStatus(t, "10.0.0.1")); o != Stored || err != nil {
				t.Fatalf("first update: %v %v", o, err)
			}
			before := l.Snapshot().Stores["ingresses"]
			held, _, _ := before.GetSingle("web", "a")
			raw := withStatus(t, "10.0.0.1")
			tc.change(raw)
			o, err := l.Update("ingresses", raw)
			if err != nil || o != tc.want {
				t.Fatalf("Update = %v, %v; want %v", o, err, tc.want)
			}
			changed, _ := l.Put("ingresses", withStatus(t, "10.0.0.1")) // back to the first object
			after := l.Snapshot().Stores["ingresses"]
			switch tc.want {
			case Unchanged:
				if changed {
					t.Error("an object equal to the held one changed the store")
				}
				if after != before {
					t.Error("a dropped update rebuilt the store")
				}
				if now, _, _ := after.GetSingle("web", "a"); now.Raw == nil || meta(now.Raw)["resourceVersion"] != "100" || !sameContent(now.Raw, held.Raw, true) {
					t.Errorf("the held object was replaced: %v", now.Raw)
				}
			default:
				if !changed || after == before {
					t.Error("a relevant change did not reach the store")
				}
			}
		})
	}
}

// Templates do not see status unless the resource asks for it; with watchStatus a
// status change is stored like any other.
func TestLiveWatchStatus(t *testing.T) {
	s := spec(v1alpha1.AccessTyped)
	w := s.WatchedResources["ingresses"]
	w.WatchStatus = true
	s.WatchedResources["ingresses"] = w
	b, err := NewBuilder(s, registry(t))
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(b)
	if !l.KeepsStatus("ingresses") || l.KeepsStatus("services") {
		t.Fatalf("KeepsStatus: ingresses %v, services %v", l.KeepsStatus("ingresses"), l.KeepsStatus("services"))
	}
	if o, err := l.Update("ingresses", withStatus(t, "10.0.0.1")); o != Stored || err != nil {
		t.Fatalf("first update: %v %v", o, err)
	}
	for _, step := range []struct {
		raw  map[string]any
		want Outcome
	}{
		{withStatus(t, "10.0.0.2"), Stored},
		{withStatus(t, "10.0.0.2"), Unchanged},
	} {
		if o, err := l.Update("ingresses", step.raw); o != step.want || err != nil {
			t.Fatalf("Update = %v, %v; want %v", o, err, step.want)
		}
	}
	o, _, _ := l.Snapshot().Stores["ingresses"].GetSingle("web", "a")
	if ip := o.Raw["status"].(map[string]any)["loadBalancer"].(map[string]any)["ingress"].([]any)[0].(map[string]any)["ip"]; ip != "10.0.0.2" {
		t.Fatalf("templates see status ip %v, want the new one", ip)
	}

	// Without watchStatus, status is gone before templates see the object.
	l = NewLive(newBuilder(t, v1alpha1.AccessTyped))
	raw := withStatus(t, "10.0.0.1")
	if _, err := l.Put("ingresses", raw); err != nil {
		t.Fatal(err)
	}
	o, _, _ = l.Snapshot().Stores["ingresses"].GetSingle("web", "a")
	if _, has := o.Raw["status"]; has {
		t.Fatal("status was kept for a resource that does not watch it")
	}
	snap, err := l.Proposed("ingresses", "web/a", withStatus(t, "10.0.0.9"))
	if err != nil {
		t.Fatal(err)
	}
	if o, _, _ := snap.Stores["ingresses"].GetSingle("web", "a"); o.Raw["status"] != nil {
		t.Fatal("a proposed object kept its status")
	}
}

// A fieldSelector or indexBy that reads status keeps status (a status change may move
// the object in or out); one that reads server-kept metadata makes every update count.
func TestLiveRelevanceFollowsSelectors(t *testing.T) {
	for _, tc := range []struct {
		fieldSelector string
		indexBy       []string
		status, exact bool
	}{
		{"", nil, false, false},
		{"status.phase=Running", nil, true, false},
		{"", []string{"metadata.namespace", "{.status.podIP}"}, true, false},
		{"metadata.generation=2", nil, false, true},
		{"", []string{"metadata.resourceVersion"}, false, true},
		{"", []string{`metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]`}, false, true},
		{"", []string{`metadata.annotations["app"]`}, false, false},
		{"spec.status=x", nil, false, false},
	} {
		s := spec(v1alpha1.AccessUntyped)
		s.WatchedResources["widgets"] = v1alpha1.WatchedResource{APIVersion: "example.com/v1", Resources: "widgets",
			FieldSelector: tc.fieldSelector, IndexBy: tc.indexBy, Store: v1alpha1.StoreFull}
		b, err := NewBuilder(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := NewLive(b).rel["widgets"]; got != (relevance{status: tc.status, exact: tc.exact}) {
			t.Errorf("fieldSelector %q indexBy %q: %+v, want status %v exact %v", tc.fieldSelector, tc.indexBy, got, tc.status, tc.exact)
		}
	}

	s := spec(v1alpha1.AccessUntyped)
	s.WatchedResources["widgets"] = v1alpha1.WatchedResource{APIVersion: "example.com/v1", Resources: "widgets",
		FieldSelector: "status.phase=Running", Store: v1alpha1.StoreFull}
	b, _ := NewBuilder(s, nil)
	l := NewLive(b)
	widget := func(phase, rv string) map[string]any {
		return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"namespace": "n", "name": "w", "resourceVersion": rv},
			"status":   map[string]any{"phase": phase}}
	}
	for i, step := range []struct {
		raw  map[string]any
		want Outcome
	}{
		{widget("Running", "1"), Stored},
		{widget("Running", "2"), Unchanged},
		{widget("Pending", "3"), Removed},
		{widget("Pending", "4"), Ignored},
		{widget("Running", "5"), Stored},
	} {
		if o, err := l.Update("widgets", step.raw); o != step.want || err != nil {
			t.Fatalf("step %d: Update = %v, %v; want %v", i, o, err, step.want)
		}
	}
}

// A refused object stays refused through irrelevant updates; a relevant change
// re-admits it.
func TestLiveUpdateReadmitsRefused(t *testing.T) {
	l := NewLive(newBuilder(t, v1alpha1.AccessTyped))
	bad := func(host, rv string) map[string]any {
		raw := withStatus(t, "10.0.0.1")
		meta(raw)["resourceVersion"] = rv
		raw["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["host"] = host
		return raw
	}
	held := func() snapshot.Object {
		l.mu.Lock()
		defer l.mu.Unlock()
		o, _ := l.held("ingresses", "web/a")
		return o
	}
	if o, err := l.Update("ingresses", bad("a\nb", "1")); o != Stored || err != nil || held().Refused == "" {
		t.Fatalf("first update: %v %v, refused %q", o, err, held().Refused)
	}
	if o, err := l.Update("ingresses", bad("a\nb", "2")); o != Unchanged || err != nil || held().Refused == "" {
		t.Fatalf("irrelevant update: %v %v, refused %q", o, err, held().Refused)
	}
	if o, err := l.Update("ingresses", bad("a.example.com", "3")); o != Stored || err != nil || held().Refused != "" {
		t.Fatalf("fixed object: %v %v, refused %q", o, err, held().Refused)
	}
}

// On-demand stores hold metadata only: a new resourceVersion may be a new body, so
// every update counts.
func TestLiveUpdateOnDemandAlwaysCounts(t *testing.T) {
	l := NewLive(newBuilder(t, v1alpha1.AccessTyped))
	l.SetOnDemand("services", loaderFunc(nil))
	svc := func(rv string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"namespace": "n", "name": "s", "resourceVersion": rv}}
	}
	for _, rv := range []string{"1", "2", "3"} {
		if o, err := l.Update("services", svc(rv)); o != Stored || err != nil {
			t.Fatalf("resourceVersion %s: %v %v", rv, o, err)
		}
	}
}

type loaderFunc func(keys ...string) ([]snapshot.Object, error)

func (f loaderFunc) Fetch(keys ...string) ([]snapshot.Object, error) { return f(keys...) }

func TestSameContent(t *testing.T) {
	obj := func(ann map[string]any, extra map[string]any) map[string]any {
		m := map[string]any{"name": "a", "resourceVersion": "1"}
		if ann != nil {
			m["annotations"] = ann
		}
		o := map[string]any{"metadata": m, "spec": map[string]any{"n": int64(1), "f": 1.5, "b": true, "l": []any{"x", nil}}}
		for k, v := range extra {
			o[k] = v
		}
		return o
	}
	la := map[string]any{lastApplied: "{}"}
	for _, tc := range []struct {
		name   string
		a, b   map[string]any
		status bool
		want   bool
	}{
		{"equal", obj(nil, nil), obj(nil, nil), false, true},
		{"only last-applied vs none", obj(la, nil), obj(nil, nil), false, true},
		{"empty annotations vs none", obj(map[string]any{}, nil), obj(nil, nil), false, true},
		{"annotation vs none", obj(map[string]any{"x": "1"}, nil), obj(nil, nil), false, false},
		{"extra top-level key", obj(nil, map[string]any{"data": map[string]any{}}), obj(nil, nil), false, false},
		{"extra top-level key, other side", obj(nil, nil), obj(nil, map[string]any{"data": map[string]any{}}), false, false},
		{"status ignored", obj(nil, map[string]any{"status": "a"}), obj(nil, map[string]any{"status": "b"}), false, true},
		{"status compared", obj(nil, map[string]any{"status": "a"}), obj(nil, map[string]any{"status": "b"}), true, false},
		{"status added", obj(nil, nil), obj(nil, map[string]any{"status": "b"}), true, false},
		{"int vs float", obj(nil, map[string]any{"x": int64(1)}), obj(nil, map[string]any{"x": 1.0}), false, false},
		{"nil vs empty map", obj(nil, map[string]any{"x": nil}), obj(nil, map[string]any{"x": map[string]any{}}), false, false},
		{"list order", obj(nil, map[string]any{"x": []any{"a", "b"}}), obj(nil, map[string]any{"x": []any{"b", "a"}}), false, false},
		{"map vs list", obj(nil, map[string]any{"x": map[string]any{}}), obj(nil, map[string]any{"x": []any{}}), false, false},
	} {
		if got := sameContent(tc.a, tc.b, tc.status); got != tc.want {
			t.Errorf("%s: sameContent = %v, want %v", tc.name, got, tc.want)
		}
		if got := sameContent(tc.b, tc.a, tc.status); got != tc.want {
			t.Errorf("%s (swapped): sameContent = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The comparison of a large object allocates nothing.
func TestSameContentAllocatesNothing(t *testing.T) {
	rules := make([]any, 0, 200)
	for i := range 200 {
		rules = append(rules, map[string]any{"host": "h", "i": int64(i), "paths": []any{map[string]any{"path": "/", "w": 1.0}}})
	}
	a := map[string]any{"metadata": map[string]any{"name": "a", "resourceVersion": "1", "annotations": map[string]any{"x": "y"}},
		"spec": map[string]any{"rules": rules}, "status": map[string]any{"x": "1"}}
	b := map[string]any{"metadata": map[string]any{"name": "a", "resourceVersion": "2", "annotations": map[string]any{"x": "y"}},
		"spec": map[string]any{"rules": rules}, "status": map[string]any{"x": "2"}}
	if n := testing.AllocsPerRun(10, func() {
		if !sameContent(a, b, false) {
			t.Fatal("not equal")
		}
	}); n != 0 {
		t.Fatalf("%v allocations per comparison", n)
	}
}
