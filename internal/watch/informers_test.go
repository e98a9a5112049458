package watch

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/fieldpath"
)

func TestPlanForIsAsNarrowAsAllConsumersAllow(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	for _, tc := range []struct {
		name  string
		needs []Need
		want  Plan
	}{
		{"alone", []Need{{GVR: gvr, Metadata: true, LabelSelector: "a=b"}}, Plan{Metadata: true, LabelSelector: "a=b"}},
		{"same selector", []Need{{GVR: gvr, LabelSelector: "a=b"}, {GVR: gvr, LabelSelector: "a=b", Metadata: true}},
			Plan{LabelSelector: "a=b", Shared: true}},
		{"different selectors", []Need{{GVR: gvr, FieldSelector: "type=kubernetes.io/tls"}, {GVR: gvr, Metadata: true}},
			Plan{Shared: true}},
		{"all metadata", []Need{{GVR: gvr, Metadata: true}, {GVR: gvr, Metadata: true}}, Plan{Metadata: true, Shared: true}},
	} {
		if got := PlanFor(tc.needs); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) handler() cache.ResourceEventHandler {
	rec := func(kind string, obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		u := obj.(*unstructured.Unstructured)
		r.mu.Lock()
		defer r.mu.Unlock()
		_, hasData := u.Object["data"]
		ev := kind + " " + u.GetName()
		if hasData {
			ev += " (data)"
		}
		r.events = append(r.events, ev)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { rec("add", o) },
		UpdateFunc: func(_, o any) { rec("update", o) },
		DeleteFunc: func(o any) { rec("delete", o) },
	}
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.events...)
	sort.Strings(out)
	return out
}

// TestSharedInformerViews: two consumers of Secrets — one with TLS Secrets by field
// selector, one metadata-only with a label selector — share one informer; each sees
// only its objects, reduced as it asked, and an update that moves an object out of
// a selector is a delete for that consumer.
func TestSharedInformerViews(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	secret := func(name, typ string, labels map[string]any, rv string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": typ,
			"metadata": map[string]any{"namespace": "ns", "name": name, "labels": labels, "resourceVersion": rv,
				"managedFields": []any{map[string]any{"manager": "kubectl"}}},
			"data": map[string]any{"k": "dmFsdWU="}}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := clientWith(ctx, t, gvr, "SecretList",
		secret("cert", "kubernetes.io/tls", nil, "1"),
		secret("auth", "Opaque", map[string]any{"auth": "yes"}, "1"),
		secret("other", "Opaque", nil, "1"))
	set := NewInformers(client, nil)
	var tls, auth recorder
	tlsC := set.Need(Need{GVR: gvr, FieldSelector: "type=kubernetes.io/tls"})
	tlsC.AddEventHandler(tls.handler())
	authC := set.Need(Need{GVR: gvr, Metadata: true, LabelSelector: "auth=yes"})
	authC.AddEventHandler(auth.handler())
	if err := set.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), tlsC.HasSynced, authC.HasSynced) {
		t.Fatal("not synced")
	}
	if got := set.Started()[gvr]; got != 1 {
		t.Fatalf("%d informers for secrets", got)
	}
	wait := func(r *recorder, want ...string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			got := r.seen()
			if len(got) == len(want) {
				ok := true
				for i := range got {
					ok = ok && got[i] == want[i]
				}
				if ok {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("events %v, want %v", got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	wait(&tls, "add cert (data)")
	wait(&auth, "add auth") // metadata only: no data
	if l := tlsC.List(); len(l) != 1 {
		t.Fatalf("tls list %v", l)
	}
	if o, ok := authC.GetByKey("ns/auth"); !ok || o.(*unstructured.Unstructured).Object["data"] != nil {
		t.Fatalf("auth view %v %v", o, ok)
	}
	if _, ok := authC.GetByKey("ns/cert"); ok {
		t.Fatal("the auth consumer sees a Secret its selector does not select")
	}
	// The cache itself dropped managedFields only.
	if o, _ := tlsC.GetByKey("ns/cert"); o.(*unstructured.Unstructured).GetManagedFields() != nil {
		t.Fatal("managedFields cached")
	}
	// "auth" loses its label: a delete for the auth consumer, nothing for tls.
	if _, err := client.Resource(gvr).Namespace("ns").Update(ctx, secret("auth", "Opaque", nil, "2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait(&auth, "add auth", "delete auth")
	wait(&tls, "add cert (data)")
}

// TestWatchErrorsAreReported: a watch that fails is reported (the controller counts
// it in haptic_watch_restarts_total), and the informer
// watches again — both for an error the reflector hands to its watch error handler
// (a reset) and for one it retries alone (connection refused: the API server away).
func TestWatchErrorsAreReported(t *testing.T) {
	for name, failure := range map[string]error{
		"reset":   errors.New("connection reset by peer"),
		"refused": &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)},
	} {
		t.Run(name, func(t *testing.T) { testWatchErrorReported(t, failure) })
	}
}

func testWatchErrorReported(t *testing.T, failure error) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "SecretList"})
	var mu sync.Mutex
	failures := 2
	client.PrependWatchReactor("secrets", func(k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if failures > 0 {
			failures--
			return true, nil, failure
		}
		return false, nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set := NewInformers(client, nil)
	reported := make(chan string, 10)
	set.OnWatchError = func(resource string, _ error) { reported <- resource }
	c := set.Need(Need{GVR: gvr})
	var rec recorder
	c.AddEventHandler(rec.handler())
	if err := set.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case r := <-reported:
			if r != "secrets" {
				t.Fatalf("reported %q", r)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a failed watch was not reported")
		}
	}
	// Watching again: a new Secret arrives.
	s := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"namespace": "ns", "name": "after"}}}
	if _, err := client.Resource(gvr).Namespace("ns").Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(rec.seen()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no event after the watch was started again")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A consumer's Trim shapes what is cached when it is alone on its resource; on a
// shared informer it reads the cached object itself, not a copy per read.
func TestTrimOnlyWhenAlone(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := clientWith(ctx, t, gvr, "ConfigMapList", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "ns", "name": "cm"}, "data": map[string]any{"k": "v"}}})
	trimmed := 0
	trim := func(obj any) any {
		trimmed++
		u := obj.(*unstructured.Unstructured)
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": u.Object["metadata"]}}
	}
	alone := startNeeds(ctx, t, client, Need{GVR: gvr, Trim: trim})[0]
	if o, ok := alone.GetByKey("ns/cm"); !ok || o.(*unstructured.Unstructured).Object["data"] != nil {
		t.Fatalf("a lone consumer's cache was not trimmed: %v", o)
	}
	trimmed = 0
	shared := startNeeds(ctx, t, client, Need{GVR: gvr, Trim: trim}, Need{GVR: gvr})
	a, _ := shared[0].GetByKey("ns/cm")
	b, _ := shared[1].GetByKey("ns/cm")
	if a != b || a.(*unstructured.Unstructured).Object["data"] == nil || trimmed != 0 {
		t.Fatalf("a shared informer's reader got a trimmed copy (%d trims): %v", trimmed, a)
	}
}

// A shared informer caches no last-applied annotation unless a consumer keeps it (a
// Watcher does when its ignored fields leave it, which the default ones do not), and
// keeps the other annotations either way.
func TestSharedInformerDropsLastApplied(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := clientWith(ctx, t, gvr, "ServiceList", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"namespace": "ns", "name": "web", "annotations": map[string]any{
			lastAppliedAnnotation: `{"apiVersion":"v1","kind":"Service"}`, "team": "web"}}}})
	cached := func(keeps bool) map[string]string {
		c := startNeeds(ctx, t, client, Need{GVR: gvr, KeepsLastApplied: keeps}, Need{GVR: gvr})[0]
		o, _ := c.GetByKey("ns/web")
		return o.(*unstructured.Unstructured).GetAnnotations()
	}
	if a := cached(false); a[lastAppliedAnnotation] != "" || a["team"] != "web" {
		t.Errorf("no consumer keeps it: cached annotations %v", a)
	}
	if a := cached(true); a[lastAppliedAnnotation] == "" || a["team"] != "web" {
		t.Errorf("a consumer keeps it: cached annotations %v", a)
	}
	def, err := fieldpath.Parse(v1alpha1.DefaultIgnoreFields[1])
	if err != nil || !slices.Equal(def.Steps, lastAppliedPath.Steps) {
		t.Errorf("the default ignored field %q is not the last-applied annotation (%v)", v1alpha1.DefaultIgnoreFields[1], err)
	}
}

// A shared informer caches no status when every consumer drops it, and the whole
// object when one does not.
func TestSharedInformerDropsStatusNobodyReads(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := clientWith(ctx, t, gvr, "ServiceList", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"namespace": "ns", "name": "web"}, "spec": map[string]any{"type": "ClusterIP"},
		"status": map[string]any{"loadBalancer": map[string]any{}}}})
	cached := func(secondDrops bool) map[string]any {
		c := startNeeds(ctx, t, client, Need{GVR: gvr, DropsStatus: true}, Need{GVR: gvr, DropsStatus: secondDrops})[0]
		o, _ := c.GetByKey("ns/web")
		return o.(*unstructured.Unstructured).Object
	}
	if o := cached(true); o["status"] != nil || o["spec"] == nil {
		t.Errorf("no consumer reads the status: cached %v", o)
	}
	if o := cached(false); o["status"] == nil {
		t.Errorf("a consumer reads the status: cached %v", o)
	}
}

// startNeeds starts a set of informers for needs and returns their consumers, synced.
func startNeeds(ctx context.Context, t *testing.T, client *dynamicfake.FakeDynamicClient, needs ...Need) []*Consumer {
	t.Helper()
	set := NewInformers(client, nil)
	var cs []*Consumer
	for _, n := range needs {
		cs = append(cs, set.Need(n))
	}
	if err := set.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if !cache.WaitForCacheSync(ctx.Done(), c.HasSynced) {
			t.Fatal("not synced")
		}
	}
	return cs
}

// clientWith is a fake dynamic client serving gvr (listed as listKind) with objs in it.
func clientWith(ctx context.Context, t *testing.T, gvr schema.GroupVersionResource, listKind string, objs ...*unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	t.Helper()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: listKind})
	for _, o := range objs {
		if _, err := client.Resource(gvr).Namespace(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return client
}
