package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"sigs.k8s.io/yaml"

	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/controller"
	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

func TestMain(m *testing.M) {
	if err := buildBinaries(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	os.Exit(clustertest.Main(m))
}

// repoBin is the repository's bin directory, where buildBinaries builds.
var repoBin string

// buildBinaries builds bin/haptic-agent and bin/haptic from the working tree: the
// process node runs the agent for the haproxy image, and the scale tests' cold
// start runs the controller as users do.
func buildBinaries() error {
	root, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	repoBin = filepath.Join(root, "bin")
	for _, name := range []string{"haptic-agent", "haptic"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(repoBin, name), "./cmd/"+name)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", name, err, out)
		}
	}
	return nil
}

const (
	agentUser = "haptic"
	agentPass = "e2e-secret-password"
	echoHost  = "echo.localhost"
)

// env is one test's deployment: its namespace, HAProxy pods, controller.
type env struct {
	t       testing.TB
	c       *clustertest.Cluster
	ns      string
	ctx     context.Context
	http    *http.Client
	metrics string // base URL of the controller's /metrics (loopback)
	// stopController stops the controller startController ran.
	stopController func()
	// controllerName is the GatewayClass controllerName the test's controller serves.
	controllerName string
	logs           *clustertest.LogBuffer // every controller of the test logs here
	// webhook, when set, is the admission webhook listener the controller serves
	// (with the certificate in webhookCertDir).
	webhook        net.Listener
	webhookCertDir string
}

func setup(t testing.TB, haproxyReplicas int) *env {
	t.Helper()
	return setupWith(t, haproxyReplicas, func(e *env) { e.applyFile("../../examples/ingress/haptic-config.yaml") })
}

// setupLibraries deploys with the chart's default libraries (base, ingress, …) and
// deploy/local's overlay, as make run does; overlay (YAML, may be empty) is merged
// last — dataplane intervals, extraContext.
func setupLibraries(t testing.TB, haproxyReplicas int, overlay string, libraries ...string) *env {
	t.Helper()
	return setupWith(t, haproxyReplicas, librariesConfig(t, overlay, libraries...))
}

// librariesConfig applies the libraries' merged config (see setupLibraries).
func librariesConfig(t testing.TB, overlay string, libraries ...string) func(*env) {
	return func(e *env) {
		files := []string{}
		for _, l := range libraries {
			files = append(files, "../../charts/haptic/libraries/"+l+".yaml")
		}
		files = append(files, "../../deploy/local/30-haptic-overlay.yaml")
		if overlay != "" {
			f := filepath.Join(t.TempDir(), "overlay.yaml")
			if err := os.WriteFile(f, []byte("apiVersion: haproxy-haptic.org/v1alpha1\nkind: HAProxyTemplateConfig\n"+overlay), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		merged, err := config.MergeFiles(files...)
		if err != nil {
			t.Fatal(err)
		}
		delete(merged["spec"].(map[string]any), "validationTests")
		if _, err := config.Decode("libraries", merged); err != nil {
			t.Fatal(err)
		}
		data, err := yaml.Marshal(merged)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "haptic-config.yaml")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		e.applyFile(f)
	}
}

func setupWith(t testing.TB, haproxyReplicas int, applyConfig func(*env)) *env {
	t.Helper()
	return setupWithStart(t, haproxyReplicas, applyConfig, true)
}

func setupWithStart(t testing.TB, haproxyReplicas int, applyConfig func(*env), start bool) *env {
	t.Helper()
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, c: c, ns: ns.Name, ctx: ctx, http: c.HTTPClient(5 * time.Second), logs: &clustertest.LogBuffer{}}
	e.kubectl("apply", "--server-side", "--force-conflicts", "-f", "../../charts/haptic/crds/")
	_, err := c.Client.CoreV1().Secrets(e.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "haptic-agent-credentials"},
		StringData: map[string]string{"username": agentUser, "password": agentPass, "credentials": agentUser + ":" + agentPass},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create credentials: %v", err)
	}
	e.applyFile("../../deploy/local/10-haproxy.yaml")
	e.kubectl("scale", "deployment/haproxy", fmt.Sprintf("--replicas=%d", haproxyReplicas))
	applyConfig(e)
	// A GatewayClass controllerName of its own, like its IngressClass: other
	// controllers on the cluster (another test's, a conformance run) leave this
	// test's Gateways alone, and its status writer leaves theirs.
	e.controllerName = "haproxy-haptic.org/" + e.ns
	e.kubectl("patch", "haproxytemplateconfig", "haptic-config", "--type=merge",
		"-p", `{"spec":{"gateways":{"controllerName":"`+e.controllerName+`"}}}`)
	e.applyFile("../../deploy/local/40-echo.yaml")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller log:\n%s", e.logs.String())
		}
	})
	if start {
		e.startController(cancel)
	}
	return e
}

// applyFile applies a manifest with its namespaces moved to the test's.
func (e *env) applyFile(path string) {
	e.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	// Each test's controller watches the whole cluster: a test-private IngressClass
	// keeps other tests' Ingresses (their namespaces may still be terminating) out.
	text := strings.NewReplacer("namespace: haptic", "namespace: "+e.ns, "namespace: default", "namespace: "+e.ns,
		"ingressClassName: haptic", "ingressClassName: "+e.ns, "ingressClass: haptic", "ingressClass: "+e.ns).Replace(string(data))
	e.applyText(text)
}

func (e *env) applyText(text string) {
	e.t.Helper()
	f := filepath.Join(e.t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.kubectl("apply", "-n", e.ns, "-f", f)
}

func (e *env) kubectl(args ...string) string {
	e.t.Helper()
	if !contains(args, "-n") {
		args = append(args, "-n", e.ns)
	}
	out, err := e.c.Kubectl(e.ctx, args...)
	if err != nil {
		e.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// startController runs `haptic run` in the test process. Its API and agent
// connections start inside the cluster's network namespace; its metrics listen on
// loopback in the root namespace.
func (e *env) startController(cancelAll context.CancelFunc) {
	e.metrics, e.stopController = e.runController(nil)
	_ = cancelAll
}

// runController runs one more `haptic run` in the test process (le: its leader
// election, nil for none) and returns its metrics URL and a stop function; it is
// stopped at cleanup too.
func (e *env) runController(le *controller.LeaderElection) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	go func() {
		done <- controller.Run(ctx, controller.Options{
			Rest: e.c.REST, Namespace: e.ns, ConfigName: "haptic-config", MetricsAddr: addr,
			HAProxyBinary: "haproxy", Log: log, AgentHTTP: e.c.HTTPClient(2 * time.Minute), LeaderElection: le,
			WebhookListener: e.webhook, WebhookCertDir: e.webhookCertDir,
		})
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					e.t.Errorf("controller: %v", err)
				}
			case <-time.After(30 * time.Second):
				e.t.Errorf("controller did not stop")
			}
		})
	}
	e.t.Cleanup(stop)
	return "http://" + addr, stop
}

// haproxyPods returns the ready HAProxy pods' IPs by name.
func (e *env) haproxyPods() map[string]string {
	pods, err := e.c.Client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(map[string]string{"app.kubernetes.io/component": "loadbalancer"}).String()})
	if err != nil {
		e.t.Fatalf("list pods: %v", err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && ready(&p) {
			out[p.Name] = p.Status.PodIP
		}
	}
	return out
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// get sends one request through HAProxy at ip, to the Ingress frontend (8080).
func (e *env) get(ip, host, path string) (int, string, error) {
	code, _, body, err := e.request(ip, "8080", host, path)
	return code, body, err
}

// request sends one GET to ip:port with Host host, and reads the answer.
func (e *env) request(ip, port, host, path string) (int, http.Header, string, error) {
	req, err := http.NewRequestWithContext(e.ctx, http.MethodGet, "http://"+net.JoinHostPort(ip, port)+path, nil)
	if err != nil {
		return 0, nil, "", err
	}
	req.Host = host
	resp, err := e.http.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body), err
}

// eventually polls cond every 100ms until it holds or the time is up.
func (e *env) eventually(what string, within time.Duration, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatalf("timed out after %s waiting for %s; last: %s", within, what, last)
}

// metric returns the sum of a metric's samples whose labels contain match.
func (e *env) metric(name, match string) float64 {
	v, err := e.tryMetric(name, match)
	if err != nil {
		e.t.Fatalf("scrape: %v", err)
	}
	return v
}

// tryMetric is metric for a controller that may not listen yet.
func (e *env) tryMetric(name, match string) (float64, error) {
	resp, err := http.Get(e.metrics + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var sum float64
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, name) || (len(line) > len(name) && line[len(name)] != '{' && line[len(name)] != ' ') {
			continue
		}
		if match != "" && !strings.Contains(line, match) {
			continue
		}
		var v float64
		fields := strings.Fields(line)
		fmt.Sscan(fields[len(fields)-1], &v)
		sum += v
	}
	return sum, nil
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }
