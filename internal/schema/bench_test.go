package schema

import "testing"

// BenchmarkConvertIngress converts the realistic Ingress fixture as decoded from
// JSON (the informer path); it runs for every object entering the store.
func BenchmarkConvertIngress(b *testing.B) {
	typ := mustType(b, bundled(b), "networking.k8s.io/v1", "ingresses")
	obj := viaJSON(b, loadYAML(b, "testdata/ingress.yaml"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := typ.Convert(obj); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConvertEndpointSlice(b *testing.B) {
	typ := mustType(b, bundled(b), "discovery.k8s.io/v1", "endpointslices")
	obj := viaJSON(b, loadYAML(b, "testdata/endpointslice.yaml"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := typ.Convert(obj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadBundled measures the once-per-process start-up cost of Bundled:
// parsing every embedded document and building every kind's type.
func BenchmarkLoadBundled(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := NewRegistry().loadFS(bundledFS, "bundled"); err != nil {
			b.Fatal(err)
		}
	}
}
