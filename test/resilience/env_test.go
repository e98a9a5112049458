package resilience

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

const (
	agentUser = "haptic"
	agentPass = "resilience-secret-password"
	echoHost  = "echo.localhost"
)

var root, _ = filepath.Abs("../..")

// agentBinary is this tree's agent under a name of its own: the HAProxy pods run
// it by path, so the cases test this tree's agent even when the cluster's node
// (shared, maybe started from another checkout) maps the haproxy image elsewhere.
const agentBinary = "resilience-haptic-agent"

func TestMain(m *testing.M) {
	builds := []struct{ out, pkg string }{{agentBinary, "./cmd/haptic-agent"}, {"haptic", "./cmd/haptic"}}
	if _, err := os.Stat(filepath.Join(root, "bin", "haptic-agent")); err != nil {
		// The node checks that the haproxy image's mapped binary exists, even
		// though the pods run agentBinary.
		builds = append(builds, struct{ out, pkg string }{"haptic-agent", "./cmd/haptic-agent"})
	}
	for _, b := range builds {
		cmd := exec.Command("go", "build", "-o", filepath.Join(root, "bin", b.out), b.pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", b.out, err, out)
			os.Exit(1)
		}
	}
	code := clustertest.Main(m)
	printTable()
	os.Exit(code)
}

func full() bool { return os.Getenv("HAPTIC_RESILIENCE") == "full" }

// env is one case's deployment: its namespace, one HAProxy pod, the echo app.
type env struct {
	t    *testing.T
	c    *clustertest.Cluster
	ns   string
	ctx  context.Context
	http *http.Client
	logs *clustertest.LogBuffer
}

func setup(t *testing.T) *env {
	t.Helper()
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, c: c, ns: ns.Name, ctx: ctx, http: c.HTTPClient(5 * time.Second), logs: &clustertest.LogBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller logs:\n%s", e.logs.String())
		}
	})
	e.kubectl("apply", "--server-side", "--force-conflicts", "-f", root+"/charts/haptic/crds/")
	if _, err := c.Client.CoreV1().Secrets(e.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "haptic-agent-credentials"},
		StringData: map[string]string{"username": agentUser, "password": agentPass, "credentials": agentUser + ":" + agentPass},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	haproxy, err := os.ReadFile(root + "/deploy/local/10-haproxy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Both containers (HAProxy's launcher and the agent) run this tree's agent.
	if n := strings.Count(string(haproxy), "        image: haproxy\n"); n != 2 {
		t.Fatalf("10-haproxy.yaml has %d containers of image haproxy, want 2 (HAProxy and the agent)", n)
	}
	e.applyText(strings.ReplaceAll(string(haproxy), "        image: haproxy\n",
		"        image: haproxy\n        command: ["+filepath.Join(root, "bin", agentBinary)+"]\n"))
	merged, err := config.MergeFiles(root+"/charts/haptic/libraries/base.yaml", root+"/charts/haptic/libraries/ingress.yaml",
		root+"/deploy/local/30-haptic-overlay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	delete(merged["spec"].(map[string]any), "validationTests")
	data, err := yaml.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	e.applyText(string(data))
	e.applyFile(root + "/deploy/local/40-echo.yaml")
	return e
}

// applyFile applies a manifest moved into the case's namespace, with an
// IngressClass of its own (other tests' controllers leave it alone).
func (e *env) applyFile(path string) {
	e.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	e.applyText(string(data))
}

func (e *env) applyText(text string) {
	e.t.Helper()
	text = strings.NewReplacer("namespace: haptic", "namespace: "+e.ns, "namespace: default", "namespace: "+e.ns,
		"ingressClassName: haptic", "ingressClassName: "+e.ns, "ingressClass: haptic", "ingressClass: "+e.ns).Replace(text)
	f := filepath.Join(e.t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.kubectl("apply", "-f", f)
}

func (e *env) kubectl(args ...string) string {
	e.t.Helper()
	out, err := e.c.Kubectl(e.ctx, append(args, "-n", e.ns)...)
	if err != nil {
		e.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// controller is one `haptic run` replica: a process in the cluster's namespace.
type controller struct {
	id   string
	cmd  *exec.Cmd
	done chan struct{}
}

// lease is the timing the cases run the controllers with.
var lease = struct{ duration, renew, retry time.Duration }{6 * time.Second, 4 * time.Second, 500 * time.Millisecond}

// startController starts a replica with identity id; it is killed (by PID) at
// cleanup. Its metrics are not served.
func (e *env) startController(id string) *controller {
	return e.startControllerWithMetrics(id, "")
}

// startControllerWithMetrics starts a replica serving /metrics at metricsAddr
// (inside the cluster's namespace).
func (e *env) startControllerWithMetrics(id, metricsAddr string) *controller {
	e.t.Helper()
	cmd := e.c.Command(e.ctx, filepath.Join(root, "bin", "haptic"), "run",
		"--kubeconfig="+e.c.Config.Kubeconfig(), "--namespace="+e.ns, "--config-name=haptic-config",
		"--metrics-addr="+metricsAddr, "--haproxy-binary=haproxy",
		"--leader-lease-duration="+lease.duration.String(), "--leader-renew-deadline="+lease.renew.String(),
		"--leader-retry-period="+lease.retry.String())
	cmd.Env = append(os.Environ(), "POD_NAME="+id)
	w := &prefixWriter{prefix: id + ": ", out: e.logs}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	c := &controller{id: id, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(c.done) }()
	e.t.Cleanup(func() { c.kill() })
	return c
}

// kill SIGKILLs the replica (by PID) and waits for it.
func (c *controller) kill() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = syscall.Kill(c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
}

// leader is the Lease's holder, "" when none.
func (e *env) leader() string {
	l, err := e.c.Client.CoordinationV1().Leases(e.ns).Get(e.ctx, "haptic-config-leader", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// haproxyPod waits for the ready HAProxy pod and returns its name and IP.
func (e *env) haproxyPod() (string, string) {
	e.t.Helper()
	var name, ip string
	e.eventually("a ready HAProxy pod", 90*time.Second, func() (bool, string) {
		pods, err := e.c.Client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=loadbalancer"})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
					name, ip = p.Name, p.Status.PodIP
				}
			}
		}
		return ip != "", fmt.Sprint(len(pods.Items), " pods")
	})
	return name, ip
}

func (e *env) agent(ip string) *agentapi.Client {
	return &agentapi.Client{BaseURL: "http://" + ip + ":5555", Username: agentUser, Password: agentPass, HTTP: e.http}
}

// agentState reads the pod's agent state.
func (e *env) agentState(ip string) agentapi.State {
	e.t.Helper()
	var st agentapi.State
	e.eventually("the agent's state", 30*time.Second, func() (bool, string) {
		var err error
		st, err = e.agent(ip).State(e.ctx)
		return err == nil, fmt.Sprint(err)
	})
	return st
}

// get sends one request through HAProxy at ip with Host host.
func get(ctx context.Context, client *http.Client, ip, host string) (int, error) {
	return clustertest.Get(ctx, client, net.JoinHostPort(ip, "8080"), host)
}

func (e *env) eventually(what string, within time.Duration, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for {
		ok, detail := cond()
		if ok {
			return
		}
		last = detail
		if time.Now().After(deadline) || e.ctx.Err() != nil {
			e.t.Fatalf("%s: not within %s (last: %s)", what, within, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settle waits until the pod has run the same set for 2.5 s.
func (e *env) settle(ip string) {
	e.t.Helper()
	last, since := "", time.Now()
	e.eventually("deployments settle", 90*time.Second, func() (bool, string) {
		st, err := e.agent(ip).State(e.ctx)
		if err != nil {
			return false, err.Error()
		}
		h := fmt.Sprint(st.Hash, st.Reloads)
		if h != last {
			last, since = h, time.Now()
		}
		return time.Since(since) > 2500*time.Millisecond, h
	})
}

// createRoute creates a Service selecting the echo pods and an Ingress routing
// host to it: a new backend, which the libraries' pool serves without a reload.
func (e *env) createRoute(name, host string) {
	e.t.Helper()
	if _, err := e.c.Client.CoreV1().Services(e.ns).Create(e.ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "echo"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(3000)}}},
	}, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create service %s: %v", name, err)
	}
	e.createIngress(name, host, name)
}

// createIngress creates an Ingress routing host to the Service's port "http".
func (e *env) createIngress(name, host, service string) {
	e.t.Helper()
	prefix := networkingv1.PathTypePrefix
	class := e.ns
	if _, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Create(e.ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
			Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: service, Port: networkingv1.ServiceBackendPort{Name: "http"}}},
			}}}},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create ingress %s: %v", name, err)
	}
}

type prefixWriter struct {
	prefix string
	out    *clustertest.LogBuffer
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if line != "" {
			_, _ = w.out.Write([]byte(w.prefix + line))
		}
	}
	return len(p), nil
}
