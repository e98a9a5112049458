package status

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BenchmarkCompute measures one full recompute (the writer runs one per debounced
// change) for 5,000 HTTPRoutes on one Gateway, and the merge+compare that decides
// that nothing needs writing.
func BenchmarkCompute(b *testing.B) {
	in := base()
	for i := range 5000 {
		in.HTTPRoutes = append(in.HTTPRoutes, httpRoute("gw", fmt.Sprintf("r%d", i), []gwv1.ParentReference{parent("gw")},
			[]string{fmt.Sprintf("h%d.example.com", i)}, svc("echo", 8080)))
	}
	now := metav1.Now()
	cur := Compute(in)
	for k, st := range cur.HTTPRoutes {
		cur.HTTPRoutes[k] = MergeRoute(st, gwv1.RouteStatus{}, now)
	}
	b.ResetTimer()
	for b.Loop() {
		r := Compute(in)
		for _, rt := range in.HTTPRoutes {
			k := types.NamespacedName{Namespace: rt.Namespace, Name: rt.Name}
			if !EqualRoute(MergeRoute(r.HTTPRoutes[k], cur.HTTPRoutes[k], now), cur.HTTPRoutes[k]) {
				b.Fatal("unchanged route differs")
			}
		}
	}
}
