package snapshot

import (
	"fmt"
	"testing"
)

// BenchmarkWith is one EndpointSlice changed in a store of n, indexed like the
// libraries' endpoints (namespace, then the Service name label): what the live
// store's snapshot costs per change.
func BenchmarkWith(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		objs := make([]Object, n)
		for i := range objs {
			objs[i] = obj("bench", fmt.Sprintf("svc-%d-%d", i/2, i%2), map[string]any{"kubernetes.io/service-name": fmt.Sprintf("svc-%d", i/2)})
		}
		s := NewStore("endpoints", paths("metadata.namespace", "metadata.labels['kubernetes.io/service-name']"), nil, objs)
		changed := obj("bench", objs[n/2].Name, map[string]any{"kubernetes.io/service-name": fmt.Sprintf("svc-%d", n/4)})
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if s.With([]Object{changed}, nil).Len() != n {
					b.Fatal("lost an object")
				}
			}
		})
	}
}
