package e2e

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

// scaleSize is TestScale's size: small in make test, full under make test-scale
// (HAPTIC_SCALE_ROUTES=5000), each with its budgets.
type scaleSize struct {
	routes        int
	convergence   time.Duration // all routes created → every route Accepted and answering 200
	changeP50     time.Duration // one new route → first 200, at this size
	changeMax     time.Duration
	controllerMiB float64       // Go heap in use after GC (the controller runs in the test process)
	coldStart     time.Duration // a new controller's start → the N routes deployed to the Gateway's pod
}

func scaleSizeFromEnv(t *testing.T) scaleSize {
	size := scaleSize{routes: 200, convergence: 90 * time.Second, changeP50: 2 * time.Second,
		changeMax: 5 * time.Second, controllerMiB: 256, coldStart: 30 * time.Second}
	if v := os.Getenv("HAPTIC_SCALE_ROUTES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			t.Fatalf("HAPTIC_SCALE_ROUTES=%q: want a number ≥ 10", v)
		}
		size.routes = n
		if n > 200 { // budgets grow with the route count (render time is linear in it)
			f := float64(n) / 200
			size.convergence = time.Duration(float64(size.convergence) * f / 4)
			size.changeP50 = 3 * time.Second
			size.changeMax = 10 * time.Second
			size.controllerMiB = 256 + 0.2*float64(n)
			size.coldStart = 10 * time.Second // the render-speed target at 5,000
		}
	}
	return size
}

// TestScale: with the default libraries and one Gateway, N HTTPRoutes converge
// (Accepted, ResolvedRefs, 200 through the Gateway) within budget; then 10
// single-route add/remove changes at that size each reach their first 200 within
// budget without reloading HAProxy; the controller's heap stays within budget; a
// controller started afresh delivers the N routes to the Gateway's pod within budget.
// N is 200 in make test; make test-scale runs 5,000.
func TestScale(t *testing.T) {
	size := scaleSizeFromEnv(t)
	g := setupGateways(t, "")
	if err := g.createGateway("scale"); err != nil {
		t.Fatal(err)
	}
	addr, err := g.gatewayAddress("scale", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	createAll(t, size.routes, func(i int) error {
		r := httpRoute(fmt.Sprintf("scale-%d", i), "scale", fmt.Sprintf("scale-%d.example.com", i), "/")
		_, err := g.gw.GatewayV1().HTTPRoutes(g.ns).Create(g.ctx, r, metav1.CreateOptions{})
		return err
	})
	g.eventually(fmt.Sprintf("all %d routes Accepted and answering 200", size.routes), size.convergence+2*time.Minute, func() (bool, string) {
		list, err := g.gw.GatewayV1().HTTPRoutes(g.ns).List(g.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		accepted := 0
		for i := range list.Items {
			if g.routeAccepted(&list.Items[i]) {
				accepted++
			}
		}
		if accepted < size.routes {
			return false, fmt.Sprintf("%d of %d accepted", accepted, size.routes)
		}
		for i := size.routes - 1; i >= 0; i -= max(1, size.routes/50) { // a sample, newest first
			if code, _, err := g.getGateway(addr, fmt.Sprintf("scale-%d.example.com", i), "/"); code != 200 {
				return false, fmt.Sprintf("scale-%d: %d %v", i, code, err)
			}
		}
		return true, ""
	})
	convergence := time.Since(start)

	g.settle(addr)
	before := g.reloadCounts(addr)
	var changes []time.Duration
	for i := range 10 {
		name, host := fmt.Sprintf("change-%d", i), fmt.Sprintf("change-%d.example.com", i)
		created := time.Now()
		if _, err := g.gw.GatewayV1().HTTPRoutes(g.ns).Create(g.ctx, httpRoute(name, "scale", host, "/"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for {
			if code, _, _ := g.getGateway(addr, host, "/"); code == 200 {
				break
			}
			if time.Since(created) > 60*time.Second {
				t.Fatalf("%s: no 200 after 60s", host)
			}
			time.Sleep(5 * time.Millisecond)
		}
		changes = append(changes, time.Since(created))
		if err := g.gw.GatewayV1().HTTPRoutes(g.ns).Delete(g.ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		g.eventually(host+" answers 404", 30*time.Second, func() (bool, string) {
			code, _, err := g.getGateway(addr, host, "/")
			return code == 404, fmt.Sprint(code, err)
		})
	}
	after := g.reloadCounts(addr)
	heap, rss := memoryNow(t)
	coldStart := g.coldStart("pod=haproxy-gw-")
	checkBudgets(t, fmt.Sprintf("TestScale at %d HTTPRoutes (one Gateway, default libraries)", size.routes), []budgetRow{
		{"full convergence (create → all Accepted + 200)", convergence.Seconds(), size.convergence.Seconds(), "s"},
		{"single change → first 200, median of 10", ms64(median(changes)), ms64(size.changeP50), "ms"},
		{"single change → first 200, max of 10", ms64(maxDuration(changes)), ms64(size.changeMax), "ms"},
		{"controller heap in use after GC", heap, size.controllerMiB, "MiB"},
		{"test process RSS (the controller and the test's clients)", rss, size.controllerMiB + 64, "MiB"},
		{"cold start: new controller → routes deployed", coldStart.Seconds(), size.coldStart.Seconds(), "s"},
		{"haproxy_reloads_total delta over the 10 changes", after.controller - before.controller, 0, ""},
		{"agent reloads over the 10 changes", float64(after.agent - before.agent), 0, ""},
	})
}

func ms64(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// coldStart stops the controller and starts a new one (fresh informers, templates
// compiled, nothing memoized) and returns how long it takes to log a deploy to a pod
// whose log attribute holds pod: what a controller restart at this size costs
// before it serves changes. The pod already runs the set, so the deploy is the
// controller's own work.
func (e *env) coldStart(pod string) time.Duration {
	e.t.Helper()
	e.stopController()
	from := len(e.logs.String())
	start := time.Now()
	e.metrics, e.stopController = e.runController(nil)
	e.eventually("the new controller's first deploy to "+strings.TrimSpace(pod), 5*time.Minute, func() (bool, string) {
		for _, l := range strings.Split(e.logs.String()[from:], "\n") {
			if strings.Contains(l, "msg=deployed") && strings.Contains(l, pod) {
				return true, ""
			}
		}
		return false, "no deploy logged yet"
	})
	return time.Since(start)
}

// createAll runs create(i) for i in [0, n) in parallel (clustertest.Parallel) and
// fails t on an error.
func createAll(t testing.TB, n int, create func(i int) error) {
	t.Helper()
	if err := clustertest.Parallel(n, create); err != nil {
		t.Fatalf("create: %v", err)
	}
}

// writeHeapProfile writes the heap profile of the test process (the controller's heap
// and the test's clients) to path: what to read when the heap budget is missed.
func writeHeapProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("heap profile: %s", path)
}

// memoryNow is, after a GC, the Go heap in use and the process's resident set
// (VmRSS), in MiB: the controller runs in the test process.
func memoryNow(t *testing.T) (heapMiB, rssMiB float64) {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if path := os.Getenv("HAPTIC_SCALE_HEAP_PROFILE"); path != "" {
		writeHeapProfile(t, path)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb float64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb); err == nil {
				return float64(ms.HeapInuse) / (1 << 20), kb / 1024
			}
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0, 0
}
