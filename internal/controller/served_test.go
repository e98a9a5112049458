package controller

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

// An iteration that skipped an unserved resource ends with errResourcesServed once
// discovery serves it (the CRD upgrade), so that runConfig starts it again; a
// discovery error in between is not taken for "served".
func TestWatchServedEndsWhenAResourceAppears(t *testing.T) {
	old := servedPoll
	servedPoll = 10 * time.Millisecond
	t.Cleanup(func() { servedPoll = old })
	api := newFakeAPI(t)
	sets := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "listenersets"}
	for _, l := range api.kube.Resources {
		if l.GroupVersion == sets.GroupVersion().String() {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: sets.Resource})
		}
	}
	// Until served is set, the API server knows no listenersets (then: a flaky one).
	var served, calls atomic.Int32
	api.kube.PrependReactor("get", "resource", func(k8stesting.Action) (bool, runtime.Object, error) {
		n := calls.Add(1)
		switch {
		case served.Load() == 1:
			return false, nil, nil
		case n%2 == 0:
			return true, nil, errors.New("discovery is away")
		default:
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "resource"}, "gateway.networking.k8s.io/v1")
		}
	})
	it := &iteration{d: deps{kube: api.kube}}
	done := make(chan error, 1)
	go func() {
		done <- it.watchServed(t.Context(), map[string]schema.GroupVersionResource{"listener-sets": sets})
	}()
	select {
	case err := <-done:
		t.Fatalf("watchServed returned %v while listenersets is not served", err)
	case <-time.After(300 * time.Millisecond):
	}
	if calls.Load() < 4 {
		t.Fatalf("discovery asked %d times in 300ms, want a poll every 10ms", calls.Load())
	}
	served.Store(1)
	select {
	case err := <-done:
		if !errors.Is(err, errResourcesServed) {
			t.Fatalf("watchServed returned %v, want errResourcesServed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watchServed did not notice listenersets being served")
	}
}
