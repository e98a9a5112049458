package e2e

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
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
	processMiB    float64       // bin/haptic run's resident set once it deployed them (#12's target at 5,000 of the mix)
}

func scaleSizeFromEnv(t *testing.T) scaleSize {
	size := scaleSize{routes: 200, convergence: 90 * time.Second, changeP50: 2 * time.Second,
		changeMax: 5 * time.Second, controllerMiB: 256, coldStart: 30 * time.Second, processMiB: 200}
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
// single-route add/remove changes at that size, and 10 more each with a Service of
// its own (its backend into a pool slot), each reach their first 200 within budget
// without reloading HAProxy; the controller's heap stays within budget; a
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
	t.Logf("%d HTTPRoutes created in %.1f s", size.routes, time.Since(start).Seconds())
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
	changes, _ := routeChanges(t, g, addr, "change", false)
	ownService, ownAfterSlice := routeChanges(t, g, addr, "own", true)
	endpoints := endpointChanges(t, g, addr, "scale-0.example.com")
	t.Logf("to first 200, ms: route %v; with its own Service %v (after its EndpointSlice %v); endpoint %v",
		msList(changes), msList(ownService), msList(ownAfterSlice), msList(endpoints))
	after := g.reloadCounts(addr)
	heap, rss := memoryNow(t)
	process := g.coldStart("pod=haproxy-gw-")
	checkBudgets(t, fmt.Sprintf("TestScale at %d HTTPRoutes (one Gateway, default libraries)", size.routes), append([]budgetRow{
		{"full convergence (create → all Accepted + 200)", convergence.Seconds(), size.convergence.Seconds(), "s"},
		{"single change → first 200, median of 10", ms64(median(changes)), ms64(size.changeP50), "ms"},
		{"single change → first 200, max of 10", ms64(maxDuration(changes)), ms64(size.changeMax), "ms"},
		{"route with its own Service → first 200, median of 10", ms64(median(ownService)), ms64(size.changeP50), "ms"},
		{"route with its own Service → first 200, max of 10", ms64(maxDuration(ownService)), ms64(size.changeMax), "ms"},
		{"  of which after its EndpointSlice listed the endpoints, median", ms64(median(ownAfterSlice)), ms64(size.changeP50), "ms"},
		{"  of which after its EndpointSlice listed the endpoints, max", ms64(maxDuration(ownAfterSlice)), ms64(size.changeMax), "ms"},
		{"new echo pod ready in its EndpointSlice → its first answer, median of 5", ms64(median(endpoints)), ms64(size.changeP50), "ms"},
		{"new echo pod ready in its EndpointSlice → its first answer, max of 5", ms64(maxDuration(endpoints)), ms64(size.changeMax), "ms"},
		{"controller heap in use after GC", heap, size.controllerMiB, "MiB"},
		{"test process RSS (the controller and the test's clients)", rss, size.controllerMiB + 64, "MiB"},
		{"cold start: bin/haptic run → routes deployed", process.took.Seconds(), size.coldStart.Seconds(), "s"},
		{"haproxy_reloads_total delta over the 30 changes", after.controller - before.controller, 0, ""},
		{"agent reloads over the 30 changes", float64(after.agent - before.agent), 0, ""},
	}, process.rows(size.processMiB)...))
}

// routeChanges adds ten routes one at a time, each timed from its create to its first
// 200 and taken out again (404). withService gives each a Service of its own, made
// with it (a backend the pods do not run yet: it goes into a pool slot, its maps
// translated, no reload); afterSlice is then the part of each time after the
// cluster's EndpointSlice controller listed the Service's ready endpoints (a watch).
func routeChanges(t *testing.T, g *gwEnv, addr, prefix string, withService bool) (took, afterSlice []time.Duration) {
	t.Helper()
	var ready *readyTimes
	if withService {
		ready = g.watchReady(discoveryv1.LabelServiceName)
	}
	for i := range 10 {
		name, host, svc := fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf("%s-%d.example.com", prefix, i), "echo"
		created := time.Now()
		if withService {
			svc = name
			g.createService(svc)
		}
		if _, err := g.gw.GatewayV1().HTTPRoutes(g.ns).Create(g.ctx, httpRouteTo(name, "scale", host, "/", svc), metav1.CreateOptions{}); err != nil {
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
		answered := time.Now()
		took = append(took, answered.Sub(created))
		if withService {
			afterSlice = append(afterSlice, max(0, answered.Sub(ready.when(g.env, "service "+svc))))
		}
		if err := g.gw.GatewayV1().HTTPRoutes(g.ns).Delete(g.ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if withService {
			if err := g.c.Client.CoreV1().Services(g.ns).Delete(g.ctx, svc, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		g.eventually(host+" answers 404", 30*time.Second, func() (bool, string) {
			code, _, err := g.getGateway(addr, host, "/")
			return code == 404, fmt.Sprint(code, err)
		})
	}
	return took, afterSlice
}

// endpointChanges scales the echo Deployment (every scale route's Service) from two
// pods to three and back, five times, each timed from the moment the Service's
// EndpointSlice shows the new pod ready (a watch beside the controller's) to the
// pod's first answer through the Gateway for host: an endpoint's way through the
// render, the plan and the agent to HAProxy's runtime servers, at the test's size.
func endpointChanges(t *testing.T, g *gwEnv, addr, host string) []time.Duration {
	t.Helper()
	ready := g.watchReady(discoveryv1.LabelServiceName + "=echo")
	var took []time.Duration
	for range 5 {
		before := g.echoPodNames()
		g.kubectl("scale", "deployment/echo", "--replicas=3")
		pod, answered := "", time.Time{}
		start := time.Now()
		for n := 0; pod == "" && n < 60000; n++ { // bounded: 60,000 requests and 90 s
			if time.Since(start) > 90*time.Second {
				t.Fatalf("%s: no answer from a third echo pod after 90s", host)
			}
			if code, _, body, _ := g.request(addr, "80", host, "/"); code == 200 && !before[echoPod(body)] {
				pod, answered = echoPod(body), time.Now()
			}
			time.Sleep(time.Millisecond)
		}
		if pod == "" {
			t.Fatalf("%s: no answer from a third echo pod in 60,000 requests", host)
		}
		at := ready.when(g.env, "pod "+pod)
		took = append(took, max(0, answered.Sub(at))) // (the two watches hear the API server at about the same time)
		g.kubectl("scale", "deployment/echo", "--replicas=2")
		g.eventually("two echo pods again", 90*time.Second, func() (bool, string) {
			n := g.readyEchoPods()
			return n == 2, fmt.Sprint(n, " ready echo pods")
		})
	}
	return took
}

// readyTimes are when a watch of EndpointSlices first saw an endpoint ready: by
// "pod <name>" (its targetRef) and by "service <name>" (the slice's Service).
type readyTimes struct {
	mu    sync.Mutex
	first map[string]time.Time
}

// watchReady watches the test's EndpointSlices matching selector until the test ends.
func (e *env) watchReady(selector string) *readyTimes {
	e.t.Helper()
	w, err := e.c.Client.DiscoveryV1().EndpointSlices(e.ns).Watch(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	r := &readyTimes{first: map[string]time.Time{}}
	go func() {
		for ev := range w.ResultChan() {
			now := time.Now()
			if slice, ok := ev.Object.(*discoveryv1.EndpointSlice); ok {
				r.saw(slice, now)
			}
		}
	}()
	return r
}

func (r *readyTimes) saw(slice *discoveryv1.EndpointSlice, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	note := func(key string) {
		if _, seen := r.first[key]; !seen {
			r.first[key] = now
		}
	}
	for _, ep := range slice.Endpoints {
		if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
			note("service " + slice.Labels[discoveryv1.LabelServiceName])
			if ep.TargetRef != nil {
				note("pod " + ep.TargetRef.Name)
			}
		}
	}
}

// when is when the watch first saw key ready, waiting up to 10 s for it to hear.
func (r *readyTimes) when(e *env, key string) time.Time {
	var at time.Time
	e.eventually("the EndpointSlice watch saw "+key+" ready", 10*time.Second, func() (bool, string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		at = r.first[key]
		return !at.IsZero(), ""
	})
	return at
}

// echoPodNames are the echo pods that exist, those being deleted too (they may still
// answer).
func (e *env) echoPodNames() map[string]bool {
	e.t.Helper()
	pods, err := e.c.Client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=echo"})
	if err != nil {
		e.t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range pods.Items {
		names[p.Name] = true
	}
	return names
}

func msList(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = math.Round(ms64(d)*10) / 10
	}
	return out
}

func ms64(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// coldStart stops the controller and starts `bin/haptic run`, the binary users run,
// as a process of its own inside the cluster's namespace (fresh informers, templates
// compiled, nothing memoized): what a controller restart at this size costs before
// it serves changes. It measures the process until its first deploy to a pod whose
// log attribute holds pod, and 10 s later, idle (processRun). The pod already runs
// the set, so the deploy is the controller's own work. The process is stopped
// before coldStart returns.
func (e *env) coldStart(pod string) (r processRun) {
	e.t.Helper()
	e.stopController()
	logs := &clustertest.LogBuffer{}
	cmd := e.c.Command(e.ctx, filepath.Join(repoBin, "haptic"), "run", "--kubeconfig", e.c.Config.Kubeconfig(),
		"--namespace", e.ns, "--config-name", "haptic-config", "--metrics-addr", "", "--debug-port", strconv.Itoa(processDebugPort),
		"--leader-elect=false", "--webhook-addr", "")
	cmd.Stdout, cmd.Stderr = logs, logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("start bin/haptic run: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	e.eventually("bin/haptic run's first deploy to "+strings.TrimSpace(pod), 5*time.Minute, func() (bool, string) {
		select {
		case err := <-exited:
			e.t.Fatalf("bin/haptic run exited: %v\n%s", err, logs.String())
		default:
		}
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "msg=deployed") && strings.Contains(l, pod) {
				return true, ""
			}
		}
		return false, "no deploy logged yet"
	})
	r.took = time.Since(start)
	r.rssMiB = processMemory(e.t, cmd.Process.Pid, "VmRSS:")[0]
	time.Sleep(10 * time.Second)
	m := processMemory(e.t, cmd.Process.Pid, "VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")
	r.settledMiB, r.peakMiB = m[0], m[1]
	r.liveMiB = e.processLiveHeap()
	e.t.Logf("bin/haptic run 10 s after its first deploy: %.1f MiB anonymous (the heap and the runtime's own), %.1f MiB of files (the binary's pages)", m[2], m[3])
	if path := os.Getenv("HAPTIC_SCALE_PROCESS_LOG"); path != "" { // (with GODEBUG=gctrace=1: its collections)
		if err := os.WriteFile(path, []byte(logs.String()), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	if profile := os.Getenv("HAPTIC_SCALE_HEAP_PROFILE"); profile != "" {
		path := strings.TrimSuffix(profile, ".pb.gz") + "-process.pb.gz"
		if err := os.WriteFile(path, e.processDebug("/debug/pprof/heap?gc=1"), 0o644); err != nil {
			e.t.Fatal(err)
		}
		e.t.Logf("bin/haptic run's heap profile: %s", path)
	}
	return r
}

// processRun is what coldStart measured of bin/haptic run: the time to its first
// deploy, its resident set then, 10 s later and at its peak, and its live heap
// after a collection then (MiB).
type processRun struct {
	took                                 time.Duration
	rssMiB, settledMiB, peakMiB, liveMiB float64
}

// rows are the process's budget rows: its resident set against budgetMiB, and its
// live heap against half of it (the collector lets the heap grow to twice what is
// live before it runs, GOGC=100).
func (r processRun) rows(budgetMiB float64) []budgetRow {
	return []budgetRow{
		{"bin/haptic run's RSS then (its own process)", r.rssMiB, budgetMiB, "MiB"},
		{"bin/haptic run's RSS 10 s later", r.settledMiB, budgetMiB, "MiB"},
		{"bin/haptic run's peak RSS (VmHWM)", r.peakMiB, budgetMiB, "MiB"},
		{"bin/haptic run's live heap after GC, 10 s later", r.liveMiB, budgetMiB / 2, "MiB"},
	}
}

// processDebugPort is bin/haptic run's pprof port, on the loopback of the cluster's
// namespace.
const processDebugPort = 6061

// processDebug is the answer of bin/haptic run's debug endpoint path.
func (e *env) processDebug(path string) []byte {
	e.t.Helper()
	resp, err := e.c.HTTPClient(30 * time.Second).Get(fmt.Sprintf("http://127.0.0.1:%d%s", processDebugPort, path))
	if err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		e.t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
	}
	return data
}

// processLiveHeap is bin/haptic run's heap after a collection (runtime.MemStats
// HeapAlloc, from the text heap profile), in MiB: what its resident set follows.
func (e *env) processLiveHeap() float64 {
	e.t.Helper()
	text := string(e.processDebug("/debug/pprof/heap?gc=1&debug=1"))
	if _, stats, ok := strings.Cut(text, "# runtime.MemStats\n"); ok { // where its anonymous pages go
		stats, _, _ = strings.Cut(stats, "# PauseNs") // (not the collections' pauses)
		e.t.Logf("bin/haptic run's memory statistics after that collection:\n%s", stats)
	}
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, "# HeapAlloc = "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				e.t.Fatalf("HeapAlloc %q: %v", v, err)
			}
			return n / (1 << 20)
		}
	}
	e.t.Fatalf("no HeapAlloc in the heap profile:\n%.500s", text)
	return 0
}

// processMemory are fields of process pid's /proc status (statusMiB); pid must be
// the controller (`ip netns exec` runs it in its own process).
func processMemory(t testing.TB, pid int, fields ...string) []float64 {
	t.Helper()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil || strings.TrimSpace(string(comm)) != "haptic" {
		t.Fatalf("process %d is %q, not the controller (%v)", pid, comm, err)
	}
	return statusMiB(t, fmt.Sprintf("/proc/%d/status", pid), fields...)
}

// statusMiB are fields (in kB) of a /proc status file, in MiB, read at once.
func statusMiB(t testing.TB, path string, fields ...string) []float64 {
	t.Helper()
	status, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(fields))
	for i, field := range fields {
		found := false
		for _, l := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(l, field); ok {
				_, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &out[i])
				found = err == nil
				break
			}
		}
		if !found {
			t.Fatalf("no %s in %s", field, path)
		}
		out[i] /= 1024
	}
	return out
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
	return float64(ms.HeapInuse) / (1 << 20), statusMiB(t, "/proc/self/status", "VmRSS:")[0]
}
