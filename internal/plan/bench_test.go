package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// bigBundles builds a running and a desired bundle: a config with the given number
// of backends (two servers each) and a host map with the given number of entries;
// the desired side moves `changes` servers and repoints `changes` map entries.
func bigBundles(backends, entries, changes int) (run, desired *bundle.Bundle) {
	cfg := func(changed int) string {
		var b strings.Builder
		b.WriteString("global\n    maxconn 8000\ndefaults\n    mode http\n    timeout client 30s\n")
		b.WriteString("frontend fe\n    bind :80\n    use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map)]\n")
		for i := 0; i < backends; i++ {
			fmt.Fprintf(&b, "backend be_%05d\n    balance roundrobin\n    http-request set-header X-Backend be_%05d\n", i, i)
			port := 8080
			if i < changed {
				port = 9090
			}
			fmt.Fprintf(&b, "    server s1 10.%d.%d.1:%d check\n    server s2 10.%d.%d.2:8080 check\n",
				i/250, i%250, port, i/250, i%250)
		}
		return b.String()
	}
	hosts := func(changed int) string {
		var b strings.Builder
		for i := 0; i < entries; i++ {
			be := i % max(backends, 1)
			if i < changed {
				be = (be + 1) % max(backends, 1)
			}
			fmt.Fprintf(&b, "host%05d.example.test be_%05d\n", i, be)
		}
		return b.String()
	}
	mk := func(changed int) *bundle.Bundle {
		return bundle.New([]bundle.File{
			{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(cfg(changed))},
			{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(hosts(changed))},
		})
	}
	return mk(0), mk(changes)
}

func BenchmarkPlan5000(b *testing.B) {
	run, desired := bigBundles(5000, 5000, 1)
	res := Plan(Running{Bundle: run}, desired, caps26)
	if res.Reload || len(res.Ops) != 2 {
		b.Fatalf("want 2 ops without reload, got %d ops, reasons %v", len(res.Ops), res.Reasons)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Plan(Running{Bundle: run}, desired, caps26)
	}
}

// TestPlan5000 checks the large plan's result; its speed is BenchmarkPlan5000's job.
func TestPlan5000(t *testing.T) {
	run, desired := bigBundles(5000, 5000, 1)
	start := time.Now()
	res := Plan(Running{Bundle: run}, desired, caps26)
	elapsed := time.Since(start)
	if res.Reload || len(res.Ops) != 2 {
		t.Fatalf("want 2 ops without reload, got %d ops, reasons %v", len(res.Ops), res.Reasons)
	}
	t.Logf("Plan on 5,000 backends + 5,000 map entries: %v", elapsed)
}

// BenchmarkPlan5000MapOnly is the common route change: haproxy.cfg unchanged, one
// map entry repointed.
func BenchmarkPlan5000MapOnly(b *testing.B) {
	run, desired := bigBundles(5000, 5000, 1)
	desired = bundle.New([]bundle.File{run.Files[0], desired.Files[1]})
	if res := Plan(Running{Bundle: run}, desired, caps26); res.Reload || len(res.Ops) != 1 {
		b.Fatalf("want 1 op without reload, got %d ops, reasons %v", len(res.Ops), res.Reasons)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Plan(Running{Bundle: run}, desired, caps26)
	}
}
