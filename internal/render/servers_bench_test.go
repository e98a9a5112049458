package render

import (
	"fmt"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// BenchmarkServiceServers is service_servers for every backend of a store of 5,000
// Services with two EndpointSlices each, as a full render calls it (each call in a
// unit of its own, its reads recorded; the objects keep their forms, as the
// watched objects do from render to render).
func BenchmarkServiceServers(b *testing.B) {
	const n = 5000
	var svcs, slices []snapshot.Object
	names := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("svc-%d", i)
		names[i] = name
		svcs = append(svcs, endpointObject("bench", name, map[string]any{"spec": map[string]any{"ports": []any{
			map[string]any{"name": "http", "port": int64(80), "targetPort": int64(8080)}}}}))
		for s := range 2 {
			sl := endpointObject("bench", fmt.Sprintf("%s-%d", name, s), map[string]any{"addressType": "IPv4",
				"ports": []any{map[string]any{"name": "http", "port": int64(8080)}},
				"endpoints": []any{map[string]any{"addresses": []any{fmt.Sprintf("10.%d.%d.%d", s+1, i/250, i%250)},
					"conditions": map[string]any{"ready": true}}}})
			sl.Raw["metadata"].(map[string]any)["labels"] = map[string]any{"kubernetes.io/service-name": name}
			slices = append(slices, sl)
		}
	}
	for _, objs := range [][]snapshot.Object{svcs, slices} {
		for i := range objs {
			objs[i].Forms = &snapshot.Forms{}
		}
	}
	snap := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{
		"services":  snapshot.NewStore("services", indexPaths("metadata.namespace", "metadata.name"), nil, svcs),
		"endpoints": snapshot.NewStore("endpoints", indexPaths("metadata.namespace", "metadata.labels['kubernetes.io/service-name']"), nil, slices),
	}}
	e := &Engine{st: &renderState{snapshot: snap, kept: &libraryCaches{}}}
	e.st.rec = newRecorder("haproxy.cfg", newOutput(0))
	b.ReportAllocs()
	for b.Loop() {
		for i := range n {
			e.st.rec.push(&scope{unit: "backend"})
			if e.serviceServers("services", "endpoints", "bench", names[i], "80", " check") == "" {
				b.Fatal("no servers")
			}
			e.st.rec.pop()
		}
		e.st.rec = newRecorder("haproxy.cfg", newOutput(0))
	}
}
