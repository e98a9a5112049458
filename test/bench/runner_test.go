//go:build benchgw

package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/haproxy-haptic/haptic/localcluster/cluster"
	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

func TestMain(m *testing.M) {
	if keep := os.Getenv("BENCH_KEEP_CLUSTER"); keep == "1" || strings.EqualFold(keep, "true") {
		os.Setenv("HAPTIC_CLUSTER_KEEP", "1")
	}
	os.Exit(clustertest.Main(m))
}

// runLabel marks every namespace the run creates: the admission webhook covers
// these namespaces only (the chart's webhook.namespaceSelector), so the run never
// judges another user's objects on the shared local cluster, and cleanup finds
// what to delete.
const runLabel = "haptic.bench/run"

// run is one benchmark run: its cluster, clients, settings and findings.
type run struct {
	t     *testing.T
	c     *clustertest.Cluster
	k     Knobs
	out   string // artifact directory
	ctx   context.Context
	root  string // repository root
	kube  kubernetes.Interface
	gw    gwclient.Interface
	http  *http.Client
	runID string

	ctrlNS    string             // the controller's namespace (the first Gateway's)
	addrs     map[Gateway]string // Gateway → its status address
	className string

	mu       sync.Mutex
	harness  []string // harness errors outside the scenarios (setup, cleanup)
	logFile  *os.File
	secretNS map[string]bool // namespaces whose Secrets the scan covers
}

// TestGatewayAPIBench runs the selected scenarios and writes the artifacts. It
// fails (a nonzero exit) only when the harness could not produce complete
// evidence; a negative measurement is reported in runner-summary.json.
func TestGatewayAPIBench(t *testing.T) {
	started := time.Now()
	k, err := LoadKnobs(os.Getenv, started, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := k.OutputDir
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(out, "runner.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	c := clustertest.Start(t)
	cfg := rest.CopyConfig(c.REST)
	cfg.QPS, cfg.Burst = 500, 1000
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gwclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), k.ProbeTimeout+k.ScaleStartupTimeout+k.ScaleDuration+k.RouteChangeTimeout+20*time.Minute)
	defer cancel()
	r := &run{t: t, c: c, k: k, out: out, ctx: ctx, root: root, kube: kube, gw: gw,
		http: c.HTTPClient(10 * time.Second), runID: "gwbench", logFile: logFile,
		addrs: map[Gateway]string{}, secretNS: map[string]bool{}, ctrlNS: k.Gateways[0].Namespace,
		className: "haptic-bench"}
	r.logf("knobs: %+v", k)
	hostFacts := readHostFacts()
	commit, dirty := r.gitState() // at the start: the code that is measured
	var results []ScenarioResult
	if err := r.install(); err != nil {
		r.harnessErr("install: %v", err)
	} else {
		for _, s := range k.Scenarios {
			res := r.scenario(s)
			r.logf("scenario %s: measured pass %v, harness error %q, headline %v", s, res.MeasuredPass, res.HarnessError, res.Headline)
			results = append(results, res)
			if err := WriteJSON(out, filepath.Join(s, "result.json"), res); err != nil {
				r.harnessErr("%v", err)
			}
		}
	}
	r.collectLogs()
	secretCount, values, invErr := r.secretInventory()
	if invErr != nil {
		r.harnessErr("secret inventory: %v", invErr)
	}
	if err := r.uninstall(); err != nil {
		r.harnessErr("cleanup: %v", err)
	}
	meta := r.metadata(hostFacts, commit, dirty)
	if err := WriteJSON(out, "metadata.json", meta); err != nil {
		r.harnessErr("%v", err)
	}
	logFile.Sync()
	scan := ScanArtifacts(out, secretCount, values, "runner-summary.json", "cluster/artifact-secret-scan.json")
	if invErr != nil {
		scan.Pass = false
		scan.Error = "no complete Secret inventory: " + invErr.Error()
	}
	if err := WriteJSON(out, "cluster/artifact-secret-scan.json", scan); err != nil {
		r.harnessErr("%v", err)
	}
	summary := Summarise(results, r.harness, scan, started, time.Now())
	if err := WriteJSON(out, "runner-summary.json", summary); err != nil {
		t.Error(err)
	}
	t.Logf("artifacts: %s", out)
	printSummary(t, summary)
	if !summary.Harness.Pass {
		t.Errorf("harness failed (final_exit_code 1): %s", strings.Join(summary.Harness.Errors, "; "))
	}
}

// scenario runs one scenario, turning a panic-free harness error into its result.
func (r *run) scenario(name string) ScenarioResult {
	res := ScenarioResult{Name: name, Started: time.Now()}
	var err error
	switch name {
	case "probe":
		err = r.probe(&res)
	case "probe-ingress":
		err = r.probeIngress(&res)
	case "routechange":
		err = r.routeChange(&res)
	case "scale":
		err = r.scale(&res)
	}
	if err != nil {
		res.HarnessError = err.Error()
	}
	res.Finished = time.Now()
	return res
}

func (r *run) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	r.mu.Lock()
	fmt.Fprintf(r.logFile, "%s %s\n", time.Now().UTC().Format(time.RFC3339Nano), line)
	r.mu.Unlock()
	r.t.Log(line)
}

func (r *run) harnessErr(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.logf("HARNESS ERROR: %s", msg)
	r.mu.Lock()
	r.harness = append(r.harness, msg)
	r.mu.Unlock()
}

// eventually polls cond every interval until it holds or within passes.
func (r *run) eventually(what string, within, interval time.Duration, cond func() (bool, string)) error {
	deadline := time.Now().Add(within)
	last := ""
	for {
		ok, msg := cond()
		if ok {
			return nil
		}
		last = msg
		if time.Now().After(deadline) || r.ctx.Err() != nil {
			return fmt.Errorf("timed out after %s waiting for %s; last: %s", within, what, last)
		}
		time.Sleep(interval)
	}
}

func (r *run) kubectl(args ...string) (string, error) {
	out, err := r.c.Kubectl(r.ctx, args...)
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// metadata records commit, versions and the effective timings.
func (r *run) metadata(host HostFacts, commit string, dirty bool) Metadata {
	versions := map[string]string{"go": runtime.Version(), "kubernetes": cluster.KubernetesVersion + " (localcluster)",
		"gateway_api_crds": cluster.GatewayAPIVersion + " experimental (localcluster)"}
	if out, err := exec.Command("haproxy", "-v").Output(); err == nil {
		versions["haproxy"] = strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]
	}
	if out, err := exec.Command(filepath.Join(r.root, "bin/haptic"), "version").Output(); err == nil {
		versions["haptic"] = strings.TrimSpace(string(out))
	}
	if v, err := r.kube.Discovery().ServerVersion(); err == nil && !strings.HasPrefix(v.GitVersion, "v0.0.0") {
		versions["kubernetes"] = v.GitVersion // the local build carries no version stamp: keep the pinned one
	}
	m := Metadata{Commit: commit, Dirty: dirty, Versions: versions,
		Knobs: r.k, ProfileDeviations: r.k.Deviations(), Host: host, Generated: time.Now().UTC()}
	m.EffectiveTimings = map[string]string{
		"minDeploymentInterval":      chartDeployInterval.String() + " (chart default)",
		"gateway_httproute_debounce": "100ms (controller default)",
		"probe_poll_interval":        r.k.ProbeIntervalFixed.String(),
		"routechange_grace_period":   r.k.RouteChangeGrace.String(),
		"scale_duration":             r.k.ScaleDuration.String(),
		"scale_startup_timeout":      r.k.ScaleStartupTimeout.String(),
		"probe_timeout":              r.k.ProbeTimeout.String(),
		"routechange_timeout":        r.k.RouteChangeTimeout.String(),
		"resource_sample_interval":   sampleInterval.String(),
	}
	if r.k.DeployInterval > 0 {
		m.EffectiveTimings["minDeploymentInterval"] = r.k.DeployInterval.String() + " (BENCH_DEPLOY_INTERVAL)"
	}
	if r.k.WatchDebounce >= 0 {
		m.EffectiveTimings["gateway_httproute_debounce"] = r.k.WatchDebounce.String() + " (BENCH_WATCH_DEBOUNCE)"
	}
	if m.Dirty {
		m.ProfileDeviations = append(m.ProfileDeviations, "uncommitted changes in the working tree")
	}
	m.PublishedWorkloadInputsMatch = r.k.ProbeRoutes == 3000 && r.k.RouteChangeIterations == 20 &&
		r.k.RouteChangeGrace == 200*time.Millisecond && r.k.ScaleNamespaces == 50 && r.k.ScaleRoutesPerNS == 100 &&
		len(r.k.Gateways) == 1
	m.ControlledDefaultProfile = m.PublishedWorkloadInputsMatch && len(m.ProfileDeviations) == 0
	m.Methodology = methodology
	return m
}

// gitState is the repository's HEAD and whether the working tree has changes.
func (r *run) gitState() (string, bool) {
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = r.root
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	return git("rev-parse", "HEAD"), git("status", "--porcelain") != ""
}

// methodology says where this harness differs from the upstream programs.
var methodology = []string{
	"The scenarios are HAPTIC's Go re-implementation of the gateway-api-bench probe, routechange and route-scale workloads (pinned commit e81292ed), run on the local cluster (real etcd, kube-apiserver, kube-controller-manager; pods as processes), not kind; the upstream programs are not downloaded.",
	"probe: latency is measured as upstream: from the return of the route's create call to the first 200, polling every 5 ms; the create call's own duration (admission webhook included) is recorded separately as apply_ms.",
	"probe/routechange backend: the echo-basic image (Gateway API conformance echo server) stands in for howardjohn/hyper-server: HTTP on 8080 (and 8081 for routechange, a second container).",
	"scale: each application is a Deployment scaled to 0 replicas, a selector-less Service with a runner-managed EndpointSlice holding one ready address, and an HTTPRoute; 5,000 backend processes do not fit 2 cores, and the endpoints are what HAPTIC renders. Churn: every ~1 s (jittered) one route's PathPrefix changes, every ~2 s (jittered) one EndpointSlice's address changes.",
	"resources: CPU (utime+stime from /proc) and RSS of every process of the controller pod and of each HAProxy pod (haptic-agent and its HAProxy children), sampled every 5 s; no Prometheus.",
	"The controller and HAProxy pods share a 2-core machine with the API server, etcd, the load generator and other users; absolute numbers are not comparable with the published 16-core runs.",
}

func readHostFacts() HostFacts {
	h := HostFacts{CPUs: runtime.NumCPU()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "model name") {
				_, v, _ := strings.Cut(l, ":")
				h.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		fmt.Sscanf(string(data), "MemTotal: %d kB", &kb)
		h.MemoryMB = kb / 1024
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		h.LoadAvg = strings.TrimSpace(string(data))
	}
	return h
}

func printSummary(t *testing.T, s RunnerSummary) {
	t.Logf("measured_result.pass=%v negative=%v harness.pass=%v final_exit_code=%d secret_scan.pass=%v",
		s.MeasuredResult.Pass, s.MeasuredResult.NegativeScenarios, s.Harness.Pass, s.Harness.FinalExitCode, s.SecretScan.Pass)
	for _, sc := range s.Scenarios {
		t.Logf("%-12s measured_pass=%v %v %s", sc.Name, sc.MeasuredPass, sc.Headline, strings.Join(sc.Reasons, "; "))
	}
}
