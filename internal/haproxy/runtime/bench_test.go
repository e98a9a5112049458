package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The runtime benchmarks run against a real HAProxy (make bench-runtime) and report
// operations per second as HAProxy 2.6 takes them through the admin socket, one
// command per connection as the agent sends them.

func BenchmarkRuntimeMapAdd(b *testing.B) {
	_, admin, mapFile := startHAProxy(b)
	ctx := context.Background()
	maps := func(string) string { return mapFile }
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		op := &AddMap{Map: "host.map", Key: fmt.Sprintf("h%07d.test", i), Value: "be_a"}
		if err := op.Run(ctx, admin, maps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
}

func BenchmarkRuntimeMapReplace5000(b *testing.B) {
	_, admin, mapFile := startHAProxy(b)
	ctx := context.Background()
	maps := func(string) string { return mapFile }
	entries := make([]MapEntry, 5000)
	for i := range entries {
		entries[i] = MapEntry{Key: fmt.Sprintf("h%05d.test", i), Value: "be_a"}
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := (&ReplaceMap{Map: "host.map", Entries: entries}).Run(ctx, admin, maps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(entries))/time.Since(start).Seconds(), "entries/s")
}

// BenchmarkRuntimeServerAddDel adds, enables (with health checks), then deletes
// servers: one iteration is one server's life.
func BenchmarkRuntimeServerAddDel(b *testing.B) {
	_, admin, _ := startHAProxy(b)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		name := fmt.Sprintf("s%d", i)
		add := &AddServer{Backend: "be_b", Server: name, Address: "127.0.0.1", Port: 9, Check: true}
		if err := add.Run(ctx, admin, nil); err != nil {
			b.Fatal(err)
		}
		if err := (&DelServer{Backend: "be_b", Server: name}).Run(ctx, admin, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "servers/s")
}
