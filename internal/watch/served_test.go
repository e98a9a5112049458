package watch

import (
	"io"
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/store"
)

var tlsRoutesV1 = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "tlsroutes"}

// A cluster with Gateway API v1.4 CRDs serves no tlsroutes v1: ServedBy says so from
// discovery (a group/version the server does not know serves nothing).
func TestServedBy(t *testing.T) {
	d := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{}}
	d.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "services"}}},
		{GroupVersion: "gateway.networking.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "httproutes"}, {Name: "gateways"}}},
		{GroupVersion: "gateway.networking.k8s.io/v1alpha2", APIResources: []metav1.APIResource{{Name: "tlsroutes"}}},
	}
	served := ServedBy(d, true)
	for gvr, want := range map[schema.GroupVersionResource]bool{
		servicesGVR: true,
		{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}: true,
		tlsRoutesV1: false,
		{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "listenersets"}:    false,
		{Group: "gateway.networking.x-k8s.io", Version: "v1alpha1", Resource: "xmeshes"}: false,
	} {
		if got := served(gvr); got != want {
			t.Errorf("served(%s) = %v, want %v", gvr, got, want)
		}
	}
}

// A watched resource the API server does not serve gets no informer: the others
// sync, the first notification comes, their objects are held, and the skipped one
// is reported once and listed by Unserved.
func TestWatcherSkipsUnservedResources(t *testing.T) {
	cfg := &v1alpha1.HAProxyTemplateConfig{Spec: v1alpha1.HAProxyTemplateConfigSpec{
		TemplatingSettings: v1alpha1.TemplatingSettings{ResourceAccess: v1alpha1.AccessUntyped},
		WatchedResources: map[string]v1alpha1.WatchedResource{
			"ingresses":  {APIVersion: "networking.k8s.io/v1", Resources: "ingresses", DebounceInterval: "0"},
			"tls-routes": {APIVersion: "gateway.networking.k8s.io/v1", Resources: "tlsroutes", DebounceInterval: "0"},
		},
	}}
	cfg.Default()
	b, err := store.NewBuilder(&cfg.Spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := store.NewLive(b)
	// The fake knows no list kind for tlsroutes: an informer on it would never sync.
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{ingressesGVR: "IngressList"}, ingressObj("1", "a.example.com", "10.0.0.1"))
	notify := make(chan string, 10)
	var reported []string
	w := &Watcher{Dynamic: client, Live: live, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Notify:     func(resource string) { notify <- resource },
		Served:     func(gvr schema.GroupVersionResource) bool { return gvr != tlsRoutesV1 },
		OnUnserved: func(resource string, _ schema.GroupVersionResource) { reported = append(reported, resource) },
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(t.Context()) }()
	select {
	case r := <-notify:
		if r != "" {
			t.Fatalf("first notification for %q, want \"\"", r)
		}
	case err := <-done:
		t.Fatalf("Run returned before syncing: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("never synced with an unserved resource watched")
	}
	snap := live.Snapshot()
	if n := snap.Stores["ingresses"].Len(); n != 1 {
		t.Errorf("ingresses holds %d objects, want 1", n)
	}
	if n := snap.Stores["tls-routes"].Len(); n != 0 {
		t.Errorf("tls-routes holds %d objects, want 0", n)
	}
	if len(reported) != 1 || reported[0] != "tls-routes" {
		t.Errorf("reported %v, want [tls-routes]", reported)
	}
	if u := w.Unserved(); len(u) != 1 || u["tls-routes"] != tlsRoutesV1 {
		t.Errorf("Unserved() = %v", u)
	}
}
