//go:build benchgw

package bench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	hruntime "github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// get sends one GET to addr:port with the Host header; it returns the status,
// the response headers and at most 512 bytes of the body.
func (r *run) get(addr, port, host, path string) (int, http.Header, string, error) {
	return getWith(r.ctx, r.http, addr, port, host, path)
}

func getWith(ctx context.Context, client *http.Client, addr, port, host, path string) (int, http.Header, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(addr, port)+path, nil)
	if err != nil {
		return 0, nil, "", err
	}
	req.Host = host
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header, string(body), nil
}

// gatewayPods returns the ready HAProxy pods of a Gateway's own fleet: name → IP.
func (r *run) gatewayPods(g Gateway) (map[string]string, error) {
	pods, err := r.kube.CoreV1().Pods(g.Namespace).List(r.ctx, metav1.ListOptions{
		LabelSelector: "gateway.networking.k8s.io/gateway-name=" + g.Name})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && podReady(&p) {
			out[p.Name] = p.Status.PodIP
		}
	}
	return out, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// controllerPod is the running controller pod (name, IP).
func (r *run) controllerPod() (string, string, error) {
	pods, err := r.controllerPods()
	if err != nil {
		return "", "", err
	}
	if len(pods) == 0 {
		return "", "", fmt.Errorf("no ready controller pod in %s", r.ctrlNS)
	}
	return pods[0].Name, pods[0].Status.PodIP, nil
}

// controllerPods are the ready controller replicas: the leader and the standby.
func (r *run) controllerPods() ([]corev1.Pod, error) {
	pods, err := r.kube.CoreV1().Pods(r.ctrlNS).List(r.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=controller"})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" && podReady(&p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// metrics scrapes every ready controller replica's /metrics and adds the series up
// (name{labels} → value): renders, reloads and change stages are counted by the leader
// only, and which replica leads is not known here, so a scrape of one replica could be
// the standby's zeros.
func (r *run) metrics() (map[string]float64, error) {
	pods, err := r.controllerPods()
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return nil, fmt.Errorf("no ready controller pod in %s", r.ctrlNS)
	}
	out := map[string]float64{}
	for _, p := range pods {
		if err := r.addMetrics(p.Status.PodIP, out); err != nil {
			return nil, fmt.Errorf("controller pod %s: %w", p.Name, err)
		}
	}
	return out, nil
}

// addMetrics adds the haptic_* series of the controller at ip to out.
func (r *run) addMetrics(ip string, out map[string]float64) error {
	resp, err := r.http.Get("http://" + net.JoinHostPort(ip, "9090") + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || !strings.HasPrefix(line, "haptic_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] += v
	}
	return nil
}

// sumMetric sums the series of one metric whose labels contain every match.
func sumMetric(m map[string]float64, name string, match ...string) float64 {
	var sum float64
	for series, v := range m {
		base, _, _ := strings.Cut(series, "{")
		if base != name {
			continue
		}
		ok := true
		for _, s := range match {
			ok = ok && strings.Contains(series, s)
		}
		if ok {
			sum += v
		}
	}
	return sum
}

var hcfgResource = schema.GroupVersionResource{Group: "haproxy-haptic.org", Version: "v1alpha1", Resource: "haproxycfgs"}

// Checksums is what a Gateway's HAProxyCfg says is deployed.
type Checksums struct {
	Config string            `json:"config"`
	Maps   map[string]string `json:"maps"`
	Pods   map[string]string `json:"pods"` // pod → checksum it runs
	Total  string            `json:"checksum"`
}

// gatewayChecksums reads the HAProxyCfg of a Gateway's fleet.
func (r *run) gatewayChecksums(g Gateway) (Checksums, error) {
	dyn, err := dynamic.NewForConfig(r.c.REST)
	if err != nil {
		return Checksums{}, err
	}
	list, err := dyn.Resource(hcfgResource).Namespace(r.ctrlNS).List(r.ctx, metav1.ListOptions{})
	if err != nil {
		return Checksums{}, err
	}
	for _, item := range list.Items {
		if item.GetAnnotations()["haproxy-haptic.org/gateway"] != g.String() {
			continue
		}
		return checksumsOf(&item), nil
	}
	return Checksums{}, fmt.Errorf("no HAProxyCfg for Gateway %s", g)
}

func checksumsOf(item *unstructured.Unstructured) Checksums {
	c := Checksums{Maps: map[string]string{}, Pods: map[string]string{}}
	c.Total, _, _ = unstructured.NestedString(item.Object, "spec", "checksum")
	c.Config, _, _ = unstructured.NestedString(item.Object, "spec", "config", "checksum")
	maps, _, _ := unstructured.NestedSlice(item.Object, "spec", "maps")
	for _, m := range maps {
		mm, _ := m.(map[string]any)
		name, _ := mm["name"].(string)
		sum, _ := mm["checksum"].(string)
		c.Maps[name] = sum
	}
	pods, _, _ := unstructured.NestedSlice(item.Object, "status", "pods")
	for _, p := range pods {
		pm, _ := p.(map[string]any)
		name, _ := pm["name"].(string)
		sum, _ := pm["checksum"].(string)
		c.Pods[name] = sum
	}
	return c
}

// runtimeMap reads a map from the HAProxy worker of a pod through its stats
// socket (a unix socket in the pod's state volume, reachable from the host).
func (r *run) runtimeMap(ns, pod, mapName string) ([]hruntime.MapEntry, error) {
	sock, err := shortSocketPath(filepath.Join(r.c.Config.PodsDir(), ns+"_"+pod, "volumes", "state", "admin.sock"))
	if err != nil {
		return nil, err
	}
	client := &hruntime.Client{Path: sock, Timeout: 20 * time.Second, RetryFor: 5 * time.Second}
	list, err := client.Do(r.ctx, "show map")
	if err != nil {
		return nil, fmt.Errorf("%s/%s: show map: %w", ns, pod, err)
	}
	path := ""
	for _, line := range strings.Split(list, "\n") {
		for _, f := range strings.Fields(line) {
			f = strings.Trim(f, "()")
			if strings.HasSuffix(f, "/"+mapName) {
				path = f
			}
		}
	}
	if path == "" {
		return nil, fmt.Errorf("%s/%s: no map %s loaded", ns, pod, mapName)
	}
	return hruntime.ShowMap(r.ctx, client, path)
}

// sampleInterval is how often the resource sampler reads /proc.
const sampleInterval = 5 * time.Second

// ResourceSample is one reading of a pod's processes.
type ResourceSample struct {
	At       time.Time `json:"at"`
	Pod      string    `json:"pod"`
	Role     string    `json:"role"` // controller or haproxy
	CPUSecs  float64   `json:"cpu_seconds"`
	RSSBytes int64     `json:"rss_bytes"`
	Procs    int       `json:"processes"`
}

// ResourceSummary is the per-pod result over a window.
type ResourceSummary struct {
	Pod       string  `json:"pod"`
	Role      string  `json:"role"`
	Samples   int     `json:"samples"`
	CPUMean   float64 `json:"cpu_cores_mean"`
	CPUMax    float64 `json:"cpu_cores_max"`
	RSSMeanMB float64 `json:"rss_mb_mean"`
	RSSMaxMB  float64 `json:"rss_mb_max"`
	RSSLastMB float64 `json:"rss_mb_last"`
}

// sampler reads CPU time and RSS of the controller's and the Gateways' HAProxy
// pods every sampleInterval until stopped.
type sampler struct {
	mu      sync.Mutex
	samples []ResourceSample
	stop    chan struct{}
	done    chan struct{}
}

func (r *run) startSampler() *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(sampleInterval)
		defer tick.Stop()
		for {
			s.read(r)
			select {
			case <-s.stop:
				s.read(r)
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) read(r *run) {
	targets := map[string]string{} // ns/pod → role
	// every replica: the one sampled alone was the standby in some runs, whose RSS
	// says nothing of the leader's
	if pods, err := r.controllerPods(); err == nil {
		for _, p := range pods {
			targets[r.ctrlNS+"/"+p.Name] = "controller"
		}
	}
	for _, g := range r.k.Gateways {
		pods, _ := r.gatewayPods(g)
		for name := range pods {
			targets[g.Namespace+"/"+name] = "haproxy"
		}
	}
	now := time.Now()
	for key, role := range targets {
		pids, err := node.PodProcesses(key)
		if err != nil || len(pids) == 0 {
			continue
		}
		smp := ResourceSample{At: now, Pod: key, Role: role, Procs: len(pids)}
		for _, pid := range pids {
			cpu, rss := procUsage(pid)
			smp.CPUSecs += cpu
			smp.RSSBytes += rss
		}
		s.mu.Lock()
		s.samples = append(s.samples, smp)
		s.mu.Unlock()
	}
}

// finish stops the sampler and summarises each pod's CPU (cores, from successive
// CPU-time deltas) and RSS.
func (s *sampler) finish() ([]ResourceSample, []ResourceSummary) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	byPod := map[string][]ResourceSample{}
	for _, smp := range s.samples {
		byPod[smp.Pod] = append(byPod[smp.Pod], smp)
	}
	var out []ResourceSummary
	for pod, ss := range byPod {
		sum := ResourceSummary{Pod: pod, Role: ss[0].Role, Samples: len(ss)}
		var cpuN int
		var rssTotal float64
		for i, smp := range ss {
			mb := float64(smp.RSSBytes) / (1 << 20)
			rssTotal += mb
			sum.RSSMaxMB = max(sum.RSSMaxMB, mb)
			sum.RSSLastMB = mb
			if i > 0 {
				dt := smp.At.Sub(ss[i-1].At).Seconds()
				dc := smp.CPUSecs - ss[i-1].CPUSecs
				if dt > 0 && dc >= 0 { // a restarted process resets its counter
					cores := dc / dt
					sum.CPUMean += cores
					sum.CPUMax = max(sum.CPUMax, cores)
					cpuN++
				}
			}
		}
		if cpuN > 0 {
			sum.CPUMean /= float64(cpuN)
		}
		sum.RSSMeanMB = rssTotal / float64(len(ss))
		out = append(out, sum)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return s.samples, out
}

// procUsage returns a process's CPU time (user+system, seconds) and RSS (bytes).
func procUsage(pid int) (float64, int64) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// Fields after the command name (which may hold spaces) start after ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 22 {
		return 0, 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	rssPages, _ := strconv.ParseInt(f[21], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return (utime + stime) / ticks, rssPages * int64(os.Getpagesize())
}

// maxSocketPath is the longest unix socket path connect(2) takes (sun_path, 108
// bytes with its NUL).
const maxSocketPath = 107

// shortSocketPath is sock, or a symbolic link to it under the temporary directory
// when sock is too long for connect(2): a cluster whose state directory has a longer
// name (HAPTIC_CLUSTER_STATE) puts pod sockets past the limit.
func shortSocketPath(sock string) (string, error) {
	if len(sock) <= maxSocketPath {
		return sock, nil
	}
	sum := sha256.Sum256([]byte(sock))
	link := filepath.Join(os.TempDir(), fmt.Sprintf("haptic-bench-%x.sock", sum[:8]))
	if target, err := os.Readlink(link); err == nil && target == sock {
		return link, nil
	}
	_ = os.Remove(link)
	if err := os.Symlink(sock, link); err != nil {
		return "", fmt.Errorf("socket path %s is too long and no link to it could be made: %w", sock, err)
	}
	return link, nil
}
