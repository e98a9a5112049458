package chart

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

var (
	repoRoot  = filepath.Join("..", "..")
	chartDir  = filepath.Join(repoRoot, "charts", "haptic")
	crdsDir   = filepath.Join(repoRoot, "charts", "haptic-crds")
	echoHost  = "echo.localhost"
	routeHost = "route.localhost"
)

func TestMain(m *testing.M) {
	if err := buildBinaries(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	os.Exit(clustertest.Main(m))
}

// buildBinaries builds bin/haptic and bin/haptic-agent from the working tree: the
// process node runs them for the chart's images (haptic, haproxy).
func buildBinaries() error {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		return err
	}
	for bin, pkg := range map[string]string{"haptic": "./cmd/haptic", "haptic-agent": "./cmd/haptic-agent"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(root, "bin", bin), pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", pkg, err, out)
		}
	}
	return nil
}

// installValues keep the release to itself on a shared cluster: its own names,
// classes and GatewayClass controllerName, and admission for its namespace only.
func installValues(ns string) map[string]any {
	return map[string]any{
		"fullnameOverride": ns,
		"ingressClass":     map[string]any{"name": ns},
		"gatewayClass":     map[string]any{"name": ns, "controllerName": "haproxy-haptic.org/" + ns},
		"controller": map[string]any{
			"webhook": map[string]any{"namespaceSelector": map[string]any{
				"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}}},
			"config": map[string]any{"dataplane": map[string]any{"minDeploymentInterval": "1s"}},
		},
		"haproxy": map[string]any{"replicas": 1},
	}
}

// renderRelease renders a chart as `helm install <ns> -n <ns>` would and returns
// the manifests, template by template in name order.
func renderRelease(t *testing.T, dir, ns string, vals map[string]any) string {
	t.Helper()
	ch, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	values, err := util.ToRenderValues(ch, vals, common.ReleaseOptions{Name: ns, Namespace: ns, Revision: 1, IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, values)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for name, text := range files {
		if strings.HasSuffix(name, ".yaml") && strings.TrimSpace(text) != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", n, files[n])
	}
	return b.String()
}

// install is one chart release in its own namespace.
type install struct {
	t    *testing.T
	c    *clustertest.Cluster
	ns   string
	ctx  context.Context
	http *http.Client
}

func (in *install) kubectl(args ...string) string {
	in.t.Helper()
	out, err := in.c.Kubectl(in.ctx, args...)
	if err != nil {
		in.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (in *install) writeFile(name, text string) string {
	in.t.Helper()
	f := filepath.Join(in.t.TempDir(), name)
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		in.t.Fatal(err)
	}
	return f
}

// eventually polls cond every 500ms until it holds or within passes.
func (in *install) eventually(what string, within time.Duration, cond func() (bool, string)) {
	in.t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) && in.ctx.Err() == nil {
		ok, detail := cond()
		if ok {
			return
		}
		last = detail
		time.Sleep(500 * time.Millisecond)
	}
	in.t.Fatalf("timed out after %s waiting for %s; last: %s", within, what, last)
}

// get sends one request from inside the cluster's network namespace.
func (in *install) get(url, host string) (int, string, error) {
	req, err := http.NewRequestWithContext(in.ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := in.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<22))
	return resp.StatusCode, string(body), nil
}

// podIP is the IP of the one ready pod matching selector.
func (in *install) podIP(selector string) (string, string) {
	pods, err := in.c.Client.CoreV1().Pods(in.ns).List(in.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		in.t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" {
			for _, c := range p.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					return p.Name, p.Status.PodIP
				}
			}
		}
	}
	in.t.Fatalf("no ready pod with %s", selector)
	return "", ""
}

// TestChartInstall installs the rendered chart, routes an Ingress and an HTTPRoute
// through its HAProxy pods (200 each), reaches pprof on the controller's loopback,
// and checks every metric of the chart's rules and dashboard against live scrapes.
func TestChartInstall(t *testing.T) {
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	in := &install{t: t, c: c, ns: ns.Name, ctx: ctx, http: c.HTTPClient(5 * time.Second)}

	// The CRDs from their own chart (cluster-wide, shared with other tests: applied
	// server-side like theirs, never deleted), then the release without them.
	in.kubectl("apply", "--server-side", "--force-conflicts", "-f", in.writeFile("crds.yaml", renderRelease(t, crdsDir, ns.Name, nil)))
	manifests := in.writeFile("release.yaml", renderRelease(t, chartDir, ns.Name, installValues(ns.Name)))
	t.Cleanup(func() {
		// The namespace goes at cleanup; the release's cluster-scoped objects go here.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if out, err := c.Kubectl(ctx, "delete", "-n", ns.Name, "-f", manifests, "--ignore-not-found", "--wait=false"); err != nil {
			t.Logf("delete the release: %v\n%s", err, out)
		}
	})
	start := time.Now()
	in.kubectl("apply", "-n", ns.Name, "-f", manifests)
	for _, d := range []string{ns.Name + "-controller", ns.Name + "-haproxy"} {
		in.kubectl("-n", ns.Name, "rollout", "status", "deployment/"+d, "--timeout=150s")
	}
	t.Logf("release applied, controller and HAProxy Deployments available in %s", time.Since(start).Round(time.Millisecond))

	// The echo backend and its Ingress; the webhook admits the Ingress once the
	// controller answers, so the apply is retried until then.
	echo, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "local", "40-echo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	echoFile := in.writeFile("echo.yaml", strings.NewReplacer("namespace: haptic", "namespace: "+ns.Name,
		"namespace: default", "namespace: "+ns.Name, "ingressClassName: haptic", "ingressClassName: "+ns.Name).Replace(string(echo)))
	in.eventually("the echo app and Ingress admitted", 90*time.Second, func() (bool, string) {
		out, err := c.Kubectl(ctx, "apply", "-n", ns.Name, "-f", echoFile)
		return err == nil, string(out)
	})
	_, haproxyIP := in.podIP("app.kubernetes.io/instance=" + ns.Name + ",app.kubernetes.io/component=loadbalancer")
	in.eventually("the Ingress answers 200 through HAProxy", 120*time.Second, func() (bool, string) {
		code, body, err := in.get("http://"+haproxyIP+":8080/", echoHost)
		return err == nil && code == 200, fmt.Sprintf("%d %v %.200s", code, err, body)
	})
	t.Logf("Ingress: 200 through HAProxy %s after %s", haproxyIP, time.Since(start).Round(time.Millisecond))

	// A Gateway of the release's GatewayClass (its own HAProxy pods: PerGateway) and
	// an HTTPRoute to the same Service.
	in.kubectl("apply", "-n", ns.Name, "-f", in.writeFile("gateway.yaml", fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: %[1]s
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route, namespace: %[1]s}
spec:
  parentRefs: [{name: gw}]
  hostnames: [%[2]s]
  rules:
  - backendRefs: [{name: echo, port: 80}]
`, ns.Name, routeHost)))
	var gwAddr string
	in.eventually("the Gateway Programmed with an address", 150*time.Second, func() (bool, string) {
		out, err := c.Kubectl(ctx, "get", "-n", ns.Name, "gateway", "gw", "-o",
			`jsonpath={.status.conditions[?(@.type=="Programmed")].status} {.status.addresses[0].value}`)
		f := strings.Fields(string(out))
		if err == nil && len(f) == 2 && f[0] == "True" {
			gwAddr = f[1]
			return true, ""
		}
		return false, string(out)
	})
	in.eventually("the HTTPRoute answers 200 through the Gateway's HAProxy", 120*time.Second, func() (bool, string) {
		code, body, err := in.get("http://"+gwAddr+":80/", routeHost)
		return err == nil && code == 200, fmt.Sprintf("%d %v %.200s", code, err, body)
	})
	t.Logf("HTTPRoute: 200 through Gateway address %s after %s", gwAddr, time.Since(start).Round(time.Millisecond))

	// The PodMonitor's selector finds the Ingress pods and the Gateway's copies.
	podMonitorPods := in.kubectl("get", "pods", "-n", ns.Name, "-l",
		"app.kubernetes.io/part-of="+ns.Name+",app.kubernetes.io/component in (loadbalancer,gateway)",
		"-o", "jsonpath={.items[*].status.podIP}")
	for _, ip := range []string{haproxyIP, gwAddr} {
		if !strings.Contains(" "+podMonitorPods+" ", " "+ip+" ") {
			t.Errorf("the PodMonitor's selector misses the HAProxy pod %s (it finds %q)", ip, podMonitorPods)
		}
	}

	controllerPod, controllerIP := in.podIP("app.kubernetes.io/instance=" + ns.Name + ",app.kubernetes.io/component=controller")
	t.Run("pprof on loopback by default", func(t *testing.T) {
		tool, err := filepath.Abs(filepath.Join(repoRoot, "bin", "haptic-cluster"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		// Inside the controller container: 127.0.0.1:8080 (the chart's default debugPort).
		out, err := exec.CommandContext(ctx, tool, "pod-exec", ns.Name+"/"+controllerPod+"/haptic",
			"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:8080/debug/pprof/").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "200" {
			t.Errorf("pprof inside the controller pod: %v %s", err, out)
		}
		// Not on the pod IP: the debug server binds loopback only.
		if code, _, err := in.get("http://"+controllerIP+":8080/debug/pprof/", ""); err == nil {
			t.Errorf("pprof answers %d on the pod IP; want loopback only", code)
		}
	})

	t.Run("a standby relays admission to the leader", in.relayedAdmission)

	t.Run("every metric of the rules and dashboard is exported", func(t *testing.T) {
		scrape := func(url string) map[string]bool {
			code, body, err := in.get(url, "")
			if err != nil || code != 200 {
				t.Fatalf("scrape %s: %d %v", url, code, err)
			}
			return scrapedNames(body)
		}
		// Every replica, as the ServiceMonitor scrapes them: a series such as
		// haptic_webhook_requests_total exists only where an admission was answered.
		controllerNames := map[string]bool{}
		for _, ip := range strings.Fields(in.kubectl("get", "pods", "-n", ns.Name, "-l",
			"app.kubernetes.io/instance="+ns.Name+",app.kubernetes.io/component=controller",
			"-o", "jsonpath={.items[*].status.podIP}")) {
			maps.Copy(controllerNames, scrape("http://"+ip+":9090/metrics"))
		}
		haproxyNames := scrape("http://" + haproxyIP + ":8404/metrics")
		exprs := chartExpressions(t)
		checked := 0
		for where, expr := range exprs {
			for _, name := range metricNames(expr) {
				from, names := "the controller", controllerNames
				if strings.HasPrefix(name, "haproxy_") {
					from, names = "HAProxy's exporter", haproxyNames
				}
				if !names[name] {
					t.Errorf("%s: metric %s is not in a live scrape of %s", where, name, from)
				}
				checked++
			}
		}
		if checked < 30 {
			t.Errorf("only %d metric references found in the chart's rules and dashboard", checked)
		}
		t.Logf("%d metric references in %d expressions checked against %d controller and %d HAProxy sample names",
			checked, len(exprs), len(controllerNames), len(haproxyNames))
	})
}
