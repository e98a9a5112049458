package watch

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/fieldpath"
	"github.com/haproxy-haptic/haptic/internal/store"
)

var (
	ingressesGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	servicesGVR  = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

// watched runs a Watcher over a fake API server holding objs and records what it
// notifies and drops.
type watched struct {
	t       *testing.T
	client  *dynamicfake.FakeDynamicClient
	live    *store.Live
	notify  chan string
	dropped chan string
	mu      sync.Mutex
	events  int
}

func startWatcher(t *testing.T, spec *v1alpha1.HAProxyTemplateConfigSpec, objs ...runtime.Object) *watched {
	t.Helper()
	b, err := store.NewBuilder(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ignore []fieldpath.Path
	for _, p := range spec.WatchedResourcesIgnoreFields {
		ignore = append(ignore, fieldpath.MustParse(p))
	}
	w := &watched{t: t, live: store.NewLive(b), notify: make(chan string, 100), dropped: make(chan string, 100),
		client: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
			map[schema.GroupVersionResource]string{ingressesGVR: "IngressList", servicesGVR: "ServiceList"}, objs...)}
	watcher := &Watcher{Dynamic: w.client, Live: w.live, Ignore: ignore,
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Notify:    func(resource string) { w.notify <- resource },
		OnEvent:   func(string, string) { w.mu.Lock(); w.events++; w.mu.Unlock() },
		OnDropped: func(resource, reason string) { w.dropped <- resource + " " + reason },
	}
	done := make(chan error, 1)
	ctx := t.Context()
	go func() { done <- watcher.Run(ctx) }()
	t.Cleanup(func() {
		// t.Context is cancelled before Cleanup runs; wait for Run to return.
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	if got := w.next(w.notify, "the first notification"); got != "" {
		t.Fatalf("first notification for %q, want \"\"", got)
	}
	return w
}

func (w *watched) next(ch chan string, what string) string {
	w.t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		w.t.Fatalf("timed out waiting for %s", what)
		return ""
	}
}

func (w *watched) none(ch chan string, what string) {
	w.t.Helper()
	select {
	case s := <-ch:
		w.t.Fatalf("unexpected %s: %q", what, s)
	default:
	}
}

func (w *watched) update(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	w.t.Helper()
	if _, err := w.client.Resource(gvr).Namespace(obj.GetNamespace()).Update(w.t.Context(), obj, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// dropped waits for an update to be dropped: it must not have been notified (the
// handler of one resource runs events in order, and with debounceInterval "0" a
// notification happens inside the handler, so an earlier one would already be seen).
func (w *watched) expectDropped(resource string) {
	w.t.Helper()
	if got := w.next(w.dropped, "a dropped update of "+resource); got != resource+" "+DropUnchanged {
		w.t.Fatalf("dropped %q, want %q", got, resource+" "+DropUnchanged)
	}
	w.none(w.notify, "notification for a dropped update")
}

func (w *watched) expectNotified(resource string) {
	w.t.Helper()
	if got := w.next(w.notify, "a notification for "+resource); got != resource {
		w.t.Fatalf("notified %q, want %q", got, resource)
	}
	w.none(w.dropped, "drop of a relevant update")
}

func (w *watched) held(resource, key string) map[string]any {
	w.t.Helper()
	for _, o := range w.live.Snapshot().Stores[resource].List() {
		if o.Key() == key {
			return o.Raw
		}
	}
	w.t.Fatalf("%s %s is not held", resource, key)
	return nil
}

func watchSpec() *v1alpha1.HAProxyTemplateConfigSpec {
	cfg := &v1alpha1.HAProxyTemplateConfig{Spec: v1alpha1.HAProxyTemplateConfigSpec{
		TemplatingSettings: v1alpha1.TemplatingSettings{ResourceAccess: v1alpha1.AccessUntyped},
		WatchedResources: map[string]v1alpha1.WatchedResource{
			"ingresses": {APIVersion: "networking.k8s.io/v1", Resources: "ingresses", DebounceInterval: "0"},
			"services":  {APIVersion: "v1", Resources: "services", DebounceInterval: "0", WatchStatus: true},
		},
	}}
	cfg.Default()
	return &cfg.Spec
}

// obj is an object as the API server sends it, with the bookkeeping that changes on
// every write.
func obj(apiVersion, kind, rv string, spec, status map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"namespace": "web", "name": "a", "resourceVersion": rv, "generation": int64(1),
			"labels":        map[string]any{"app": "web"},
			"annotations":   map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}"},
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Apply"}}},
		"spec":   spec,
		"status": status,
	}}
}

func ingressObj(rv, host, ip string) *unstructured.Unstructured {
	return obj("networking.k8s.io/v1", "Ingress", rv,
		map[string]any{"rules": []any{map[string]any{"host": host}}},
		map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": ip}}}})
}

// Updates that change only status or server-kept metadata are dropped before the
// debouncer and counted; a change templates can see is stored and notified.
func TestWatcherDropsIrrelevantUpdates(t *testing.T) {
	w := startWatcher(t, watchSpec(), ingressObj("1", "a.example.com", "10.0.0.1"))
	if _, has := w.held("ingresses", "web/a")["status"]; has {
		t.Fatal("status reached the store of a resource that does not watch it")
	}

	// The controller's own status write.
	w.update(ingressesGVR, ingressObj("2", "a.example.com", "10.0.0.2"))
	w.expectDropped("ingresses")
	// resourceVersion alone.
	w.update(ingressesGVR, ingressObj("3", "a.example.com", "10.0.0.2"))
	w.expectDropped("ingresses")
	// managedFields alone (and generation, and the last-applied annotation).
	o := ingressObj("4", "a.example.com", "10.0.0.2")
	o.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "haptic", "subresource": "status"}}
	o.Object["metadata"].(map[string]any)["generation"] = int64(7)
	o.Object["metadata"].(map[string]any)["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"x":1}`}
	w.update(ingressesGVR, o)
	w.expectDropped("ingresses")
	if rv := w.held("ingresses", "web/a")["metadata"].(map[string]any)["resourceVersion"]; rv != "1" {
		t.Fatalf("a dropped update replaced the held object (resourceVersion %v)", rv)
	}

	// A label.
	o = ingressObj("5", "a.example.com", "10.0.0.2")
	o.SetLabels(map[string]string{"app": "other"})
	w.update(ingressesGVR, o)
	w.expectNotified("ingresses")
	// An annotation.
	o = ingressObj("6", "a.example.com", "10.0.0.2")
	o.SetLabels(map[string]string{"app": "other"})
	o.SetAnnotations(map[string]string{"haproxy-haptic.org/timeout-server": "5s"})
	w.update(ingressesGVR, o)
	w.expectNotified("ingresses")
	// The spec.
	o = ingressObj("7", "b.example.com", "10.0.0.2")
	o.SetLabels(map[string]string{"app": "other"})
	o.SetAnnotations(map[string]string{"haproxy-haptic.org/timeout-server": "5s"})
	w.update(ingressesGVR, o)
	w.expectNotified("ingresses")
	held := w.held("ingresses", "web/a")
	if host := held["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["host"]; host != "b.example.com" {
		t.Fatalf("the store holds host %v after a spec change", host)
	}
	if _, has := held["status"]; has {
		t.Fatal("status reached the store after an update")
	}

	w.mu.Lock()
	events := w.events
	w.mu.Unlock()
	if events != 7 {
		t.Errorf("%d events counted, want 7 (every event, dropped or not)", events)
	}
}

// With watchStatus a status change reaches templates.
func TestWatcherWatchStatus(t *testing.T) {
	svc := func(rv, ip string) *unstructured.Unstructured {
		return obj("v1", "Service", rv, map[string]any{"type": "LoadBalancer"},
			map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": ip}}}})
	}
	w := startWatcher(t, watchSpec(), svc("1", "10.0.0.1"))
	w.update(servicesGVR, svc("2", "10.0.0.2"))
	w.expectNotified("services")
	status, _ := w.held("services", "web/a")["status"].(map[string]any)
	if ip := status["loadBalancer"].(map[string]any)["ingress"].([]any)[0].(map[string]any)["ip"]; ip != "10.0.0.2" {
		t.Fatalf("templates see ip %v, want 10.0.0.2", ip)
	}
	w.update(servicesGVR, svc("3", "10.0.0.2"))
	w.expectDropped("services")
}

// The informer caches objects without ignored fields and, unless the resource watches
// it, without status; the object given is left alone (a shared informer's cache).
func TestReducerStripsStatus(t *testing.T) {
	w := &Watcher{Ignore: []fieldpath.Path{fieldpath.MustParse("metadata.managedFields")}}
	for _, keep := range []bool{false, true} {
		o := ingressObj("1", "a.example.com", "10.0.0.1")
		out := w.reducer(keep)(o).(*unstructured.Unstructured)
		if _, has := out.Object["metadata"].(map[string]any)["managedFields"]; has {
			t.Error("managedFields kept")
		}
		if _, has := out.Object["status"]; has != keep {
			t.Errorf("keepStatus %v: status kept %v", keep, has)
		}
		if _, has := o.Object["status"]; !has {
			t.Error("the reducer modified the object it was given")
		}
		if _, has := o.Object["metadata"].(map[string]any)["managedFields"]; !has {
			t.Error("the reducer removed managedFields from the object it was given")
		}
	}
}
