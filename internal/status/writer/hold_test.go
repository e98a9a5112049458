package writer

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
