package watch

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

func secret(ns, name, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"data":     map[string]any{"tls.crt": value},
	}}
}

// The on-demand store fetches a body when a template reads it, serves repeats from its
// cache, and fetches again after the object changed (Forget).
func TestOnDemandFetchCachesAndForgets(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{secretsGVR: "SecretList"}, secret("ns", "tls", "v1"))
	admitted := 0
	od := newOnDemand(client.Resource(secretsGVR), 2, func(raw map[string]any) (snapshot.Object, error) {
		admitted++
		return snapshot.Object{Namespace: "ns", Name: "tls", Raw: raw}, nil
	})
	get := func() string {
		objs, err := od.Fetch("ns", "tls")
		if err != nil || len(objs) != 1 {
			t.Fatalf("fetch: %v %v", objs, err)
		}
		return objs[0].Raw["data"].(map[string]any)["tls.crt"].(string)
	}
	if got := get(); got != "v1" {
		t.Fatalf("got %q", got)
	}
	get()
	if gets := countGets(client); gets != 1 || admitted != 1 {
		t.Fatalf("a cached object was fetched again: %d gets, %d admitted", gets, admitted)
	}
	if _, err := client.Resource(secretsGVR).Namespace("ns").Update(t.Context(), secret("ns", "tls", "v2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	od.Forget("ns/tls")
	if got := get(); got != "v2" {
		t.Fatalf("after Forget got %q, want the new body", got)
	}
	if objs, err := od.Fetch("ns", "missing"); err != nil || len(objs) != 0 {
		t.Fatalf("a missing object must give nothing, got %v %v", objs, err)
	}
	if _, err := od.Fetch("a", "b", "c"); err == nil {
		t.Fatal("three keys must be an error")
	}
}

func countGets(c *dynamicfake.FakeDynamicClient) int {
	n := 0
	for _, a := range c.Actions() {
		if a.GetVerb() == "get" {
			n++
		}
	}
	return n
}
