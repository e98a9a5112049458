package writer

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haproxy-haptic/haptic/internal/status"
)

// The runtime path first: a status pass waits for BeforePass (the controller
// holds it while a change is delivered to the pods), and AfterPass follows it.
func TestPassWaitsForBeforePass(t *testing.T) {
	const gv = "gateway.networking.k8s.io/v1"
	objs := []runtime.Object{
		obj(t, gv, "GatewayClass", &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "haptic", UID: "gc"},
			Spec: gwv1.GatewayClassSpec{ControllerName: status.ControllerName}}),
	}
	var writes, after atomic.Int64
	release := make(chan struct{})
	m, _, _ := fakeManagerWith(t, objs, Options{Debounce: time.Millisecond,
		OnWrite:    func(string) { writes.Add(1) },
		BeforePass: func(context.Context) { <-release },
		AfterPass:  func() { after.Add(1) }})
	m.SetAddresses(nil)
	time.Sleep(100 * time.Millisecond)
	if n := writes.Load(); n != 0 {
		t.Fatalf("%d status writes while the pass was held", n)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for (writes.Load() == 0 || after.Load() == 0) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if writes.Load() == 0 || after.Load() == 0 {
		t.Fatalf("after the hold: %d writes, %d AfterPass calls", writes.Load(), after.Load())
	}
}

// Passes are paced on their computation, not on their writes: a pass whose write
// waits 400 ms on the API server does not hold the next change's pass back by four
// times that.
func TestPassPacingLeavesOutWrites(t *testing.T) {
	const gv = "gateway.networking.k8s.io/v1"
	objs := []runtime.Object{
		obj(t, gv, "GatewayClass", &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "haptic", UID: "gc"},
			Spec: gwv1.GatewayClassSpec{ControllerName: status.ControllerName}}),
	}
	var writes atomic.Int64
	m, dyn, ctx := fakeManagerWith(t, objs, Options{Debounce: 10 * time.Millisecond, OnWrite: func(string) { writes.Add(1) }})
	var mu sync.Mutex
	var started []time.Time
	dyn.PrependReactor("update", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			mu.Lock()
			started = append(started, time.Now())
			mu.Unlock()
			time.Sleep(400 * time.Millisecond)
		}
		return false, nil, nil
	})
	m.SetAddresses(nil)
	waitWrites := func(n int64) time.Time {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for writes.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d status writes, want %d", writes.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
		return time.Now()
	}
	firstDone := waitWrites(1)
	gw := obj(t, gv, "Gateway", &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw", UID: "gw", Generation: 1},
		Spec: gwv1.GatewaySpec{GatewayClassName: "haptic", Listeners: []gwv1.Listener{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType}}}})
	if _, err := dyn.Resource(Gateways).Namespace("ns").Create(ctx, gw, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitWrites(2)
	mu.Lock()
	defer mu.Unlock()
	if gap := started[len(started)-1].Sub(firstDone); gap > 800*time.Millisecond {
		t.Fatalf("the next pass wrote %s after the slow one ended: paced on its writes", gap)
	}
}
