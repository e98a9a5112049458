package render

import (
	"fmt"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// PrepareForms makes the form a helper reads for the resources it knows, and none
// for others.
func TestPrepareForms(t *testing.T) {
	route := map[string]any{"metadata": map[string]any{"namespace": "ns", "name": "r"}, "spec": map[string]any{}}
	for _, tc := range []struct {
		apiVersion, resources string
		raw                   map[string]any
		kind                  formKind
		made                  bool
	}{
		{"discovery.k8s.io/v1", "endpointslices", map[string]any{}, formEndpointSlice, true},
		{"v1", "services", map[string]any{}, formService, true},
		{"networking.k8s.io/v1", "ingresses", map[string]any{}, formIngress, true},
		{"gateway.networking.k8s.io/v1", "httproutes", route, formHTTPRoute, true},
		{"gateway.networking.k8s.io/v1", "grpcroutes", route, formGRPCRoute, true},
		{"example.com/v1", "services", map[string]any{}, formService, false},
		{"v1", "endpoints", map[string]any{}, formEndpointSlice, false},
	} {
		o := snapshot.Object{Raw: tc.raw, Forms: new(snapshot.Forms)}
		PrepareForms(tc.apiVersion, tc.resources, o)
		if _, made := o.Forms.Get(tc.kind); made != tc.made {
			t.Errorf("%s %s: form made %v, want %v", tc.apiVersion, tc.resources, made, tc.made)
		}
	}
}

// An EndpointSlice's form keeps the ready endpoints' addresses and, per port, their
// server names; the helpers' output is the same with the form kept or made again.
func TestEndpointSliceForm(t *testing.T) {
	raw := map[string]any{
		"ports": []any{map[string]any{"name": "http", "port": 8080.0}, map[string]any{"name": "none"}},
		"endpoints": []any{
			map[string]any{"addresses": []any{"10.0.0.1", "fd00::1"}},
			map[string]any{"addresses": []any{"10.0.0.2"}, "conditions": map[string]any{"ready": false}},
			map[string]any{"addresses": []any{"host.example"}, "conditions": map[string]any{"ready": true}},
		},
	}
	f := endpointSliceForm(raw)
	if want := []string{"10.0.0.1", "fd00::1", "host.example"}; len(f.addrs) != 3 || f.addrs[0] != want[0] || f.addrs[1] != want[1] || f.addrs[2] != want[2] {
		t.Fatalf("addresses %q, want %q", f.addrs, want)
	}
	if p := f.ports[0]; p.text != "8080" || p.servers[0] != "srv_10_0_0_1_8080" || p.servers[1] != "srv_fd00__1_8080" || p.servers[2] != "" {
		t.Errorf("port %+v", p)
	}
	if p := f.ports[1]; p.number != 0 || p.servers != nil {
		t.Errorf("a port without a number: %+v", p)
	}
	for _, forms := range []*snapshot.Forms{nil, new(snapshot.Forms)} {
		slice := snapshot.Object{Namespace: "ns", Name: "s", Raw: raw, Forms: forms}
		for range 2 {
			var got []string
			endpointServers([]snapshot.Object{slice}, "http", func(line string) {
				got = append(got, line)
			}, func(_ snapshot.Object, addr string) { got = append(got, "bad "+addr) })
			if want := "[srv_10_0_0_1_8080 10.0.0.1:8080 srv_fd00__1_8080 fd00::1:8080 bad host.example]"; fmt.Sprint(got) != want {
				t.Errorf("servers %v, want %s", got, want)
			}
		}
	}
}
