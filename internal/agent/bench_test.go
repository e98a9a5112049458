package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// routeSet is a file set shaped like the gateway library's at n routes: a
// haproxy.cfg with one note comment per route, an exact host map and an
// order-sensitive (map_beg) path map, each with one line per route.
func routeSet(port, n int, mapsDir string) []bundle.File {
	var cfg, hosts, paths strings.Builder
	cfg.WriteString(fmt.Sprintf(`global
    hard-stop-after 5s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:%d
    http-request set-var(txn.route) req.hdr(host),lower,map(%s/host.map)
    http-request set-var(txn.be) path,map_beg(%s/path-prefix.map) if { var(txn.route) -m found }
    http-request return status 200 content-type text/plain string "ok" if { var(txn.be) -m found }
    http-request return status 404 content-type text/plain string "nomatch"
`, port, mapsDir, mapsDir))
	for i := range n {
		fmt.Fprintf(&cfg, "# route %d: backend default/missing not found\n", i)
		fmt.Fprintf(&hosts, "%d-route.example.com r%d\n", i, i)
		fmt.Fprintf(&paths, "/%d/ be_%d\n", i, i)
	}
	return []bundle.File{configFile(cfg.String()),
		{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(hosts.String())},
		{Kind: bundle.KindMap, Name: "path-prefix.map", Content: bundle.TextOf(paths.String())}}
}

// BenchmarkRuntimeApply is one route added at runtime (two map entries) to an
// agent that runs n routes: what a probe route costs the agent, per apply.
// go test -run '^$' -bench RuntimeApply ./internal/agent
func BenchmarkRuntimeApply(b *testing.B) {
	needHAProxy(b)
	for _, n := range []int{100, 1000, 3000} {
		for _, asEdits := range []bool{false, true} {
			b.Run(fmt.Sprintf("%d/edits=%v", n, asEdits), func(b *testing.B) { benchRuntimeApply(b, n, asEdits) })
		}
	}
}

func benchRuntimeApply(b *testing.B, n int, asEdits bool) {
	opts := testOptions(b, b.TempDir())
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.HAProxyOutput = io.Discard
	a, _ := startAgent(b, opts)
	port := freePort(b)
	base := bundle.New(routeSet(port, n, opts.Layout.MapsDir))
	if res, code := a.ApplyConfig(context.Background(), agentapi.ConfigRequest{Hash: base.Hash, Files: base.Files}); code != 200 {
		b.Fatalf("initial set: %d %+v", code, res)
	}
	var cpu time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		cur := a.current
		k := n + i
		host := fmt.Sprintf("%d-route.example.com", k)
		path := fmt.Sprintf("/%d/", k)
		files := []bundle.File{
			{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(mapContent(cur, "host.map") + host + " r" + strconv.Itoa(k) + "\n")},
			{Kind: bundle.KindMap, Name: "path-prefix.map", Content: bundle.TextOf(mapContent(cur, "path-prefix.map") + path + " be_" + strconv.Itoa(k) + "\n")},
		}
		next := merged(cur, files)
		req := agentapi.RuntimeRequest{BaseHash: cur.Hash, Hash: next.Hash, Files: files, Operations: []runtime.Op{
			{Operation: &runtime.AddMap{Map: "host.map", Key: host, Value: "r" + strconv.Itoa(k)}},
			{Operation: &runtime.AddMap{Map: "path-prefix.map", Key: path, Value: "be_" + strconv.Itoa(k)}},
		}}
		if asEdits {
			req.Files = nil
			for _, f := range files {
				e, ok := agentapi.EditOf(fileOf(cur, f.Name), f)
				if !ok {
					b.Fatalf("%s: no edit", f.Name)
				}
				req.Edits = append(req.Edits, e)
			}
		}
		b.StartTimer()
		c0 := cpuTime()
		res, code := a.ApplyRuntime(context.Background(), req)
		cpu += cpuTime() - c0
		if code != 200 || res.Reloaded {
			b.Fatalf("route %d: %d %+v", k, code, res)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU this process (the agent's code, not HAProxy) has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func mapContent(b *bundle.Bundle, name string) string { return fileOf(b, name).Content.String() }

func fileOf(b *bundle.Bundle, name string) bundle.File {
	for _, f := range b.Files {
		if f.Kind == bundle.KindMap && f.Name == name {
			return f
		}
	}
	return bundle.File{}
}

// BenchmarkServersReadBack is the configuration side of an endpoint's read back: the
// servers of the backend an operation touched, in a haproxy.cfg of n backends, as
// the agent reads them (proxiesServers: the backend's section) and as a parse of the
// whole configuration reads them (configServers, what it did before).
// go test -run '^$' -bench ServersReadBack ./internal/agent
func BenchmarkServersReadBack(b *testing.B) {
	for _, n := range []int{5000, 50000} {
		var sb strings.Builder
		sb.WriteString("global\ndefaults\n    mode http\n")
		for i := range n {
			fmt.Fprintf(&sb, "\nbackend gw_ns_svc-%d_80\n    balance roundrobin\n", i)
			for _, net := range []int{1, 2} {
				fmt.Fprintf(&sb, "    server srv_10_%d_%d 10.%d.%d.%d:8080 check\n", net, i, net, i/250, i%250)
			}
		}
		text := bundle.TextOf(sb.String())
		touched := []string{fmt.Sprintf("gw_ns_svc-%d_80", n/2)}
		b.Run(fmt.Sprintf("section/%d", n), func(b *testing.B) {
			for b.Loop() {
				if s, err := proxiesServers(text, touched); err != nil || len(s[touched[0]]) != 2 {
					b.Fatalf("%v %v", s, err)
				}
			}
		})
		b.Run(fmt.Sprintf("whole/%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := configServers(text.String()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
