package e2e

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// reloadFreeOverlay makes drift visible within seconds; reloads keep the default
// 2 s pacing window.
const reloadFreeOverlay = `spec:
  dataplane:
    driftPreventionInterval: 3s
    minDeploymentInterval: 2s
`

// TestReloadFreeIngress drives the default libraries (base + ingress, default
// compression) on real HAProxy 2.6 through the agent: route add/remove with a new
// Service each time, endpoint churn and route changes under keep-alive and
// new-connection load never reload; a burst of structural changes is paced; drift
// on a pod is corrected.
func TestReloadFreeIngress(t *testing.T) {
	e := setupLibraries(t, 1, reloadFreeOverlay, "base", "ingress")
	var pod, ip string
	e.eventually("a ready HAProxy pod", 90*time.Second, func() (bool, string) {
		for name, addr := range e.haproxyPods() {
			pod, ip = name, addr
		}
		return ip != "", ""
	})
	e.eventually("200 from echo", 90*time.Second, func() (bool, string) {
		code, body, err := e.get(ip, echoHost, "/")
		return code == 200, fmt.Sprint(code, err, body)
	})
	e.settle(ip)

	phase(t, "50 route add/remove cycles, each to a new Service, do not reload", func() {
		before := e.reloadCounts(ip)
		start := time.Now()
		var firstOK []time.Duration
		for i := range 50 {
			name, host := fmt.Sprintf("cycle-%d", i), fmt.Sprintf("cycle-%d.localhost", i)
			created := time.Now()
			e.createRoute(name, host, "/")
			e.eventually(host+" answers 200", 30*time.Second, func() (bool, string) {
				code, _, err := e.get(ip, host, "/")
				return code == 200, fmt.Sprint(code, err)
			})
			firstOK = append(firstOK, time.Since(created))
			e.deleteRoute(name)
			e.eventually(host+" answers 404", 30*time.Second, func() (bool, string) {
				code, _, err := e.get(ip, host, "/")
				return code == 404, fmt.Sprint(code, err)
			})
		}
		e.requireNoReload(ip, before, "50 add/remove cycles")
		t.Logf("50 cycles in %s; route created → first 200: median %s, max %s",
			time.Since(start).Round(time.Millisecond), median(firstOK), maxDuration(firstOK))
	})

	phase(t, "endpoint churn 1 → 10 → 1 does not reload", func() {
		before := e.reloadCounts(ip)
		for _, n := range []int{1, 10, 1} {
			e.kubectl("scale", "deployment/echo", fmt.Sprintf("--replicas=%d", n))
			e.eventually(fmt.Sprintf("%d echo endpoints served", n), 120*time.Second, func() (bool, string) {
				seen := map[string]bool{}
				for range 5 * n {
					_, body, _ := e.get(ip, echoHost, "/")
					seen[echoPod(body)] = true
				}
				return len(seen) == n && e.readyEchoPods() == n, fmt.Sprint(seen)
			})
		}
		time.Sleep(3 * time.Second) // terminating pods leave their EndpointSlices
		e.requireNoReload(ip, before, "scaling 1 → 10 → 1")
	})

	phase(t, "keep-alive and new-connection load during 20 route changes 200 ms apart loses nothing", func() {
		before := e.reloadCounts(ip)
		e.underLoad(net.JoinHostPort(ip, "8080"), echoHost, func() {
			for i := range 20 {
				name := fmt.Sprintf("churn-%d", i/2)
				if i%2 == 0 {
					e.createRoute(name, name+".localhost", "/")
				} else {
					e.deleteRoute(name)
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
		e.requireNoReload(ip, before, "20 route changes under load")
	})

	phase(t, "drift on the pod is corrected within driftPreventionInterval", func() {
		e.podExec(pod, "sh", "-c", "echo 'drift.localhost haptic_default_404' >> /etc/haproxy/maps/host.map")
		drifted := time.Now()
		e.eventually("the pod's files equal what was deployed again", 15*time.Second, func() (bool, string) {
			st := e.agentState(ip, agentPass)
			return st["treeHash"] == st["hash"] && !strings.Contains(e.podExec(pod, "cat", "/etc/haproxy/maps/host.map"), "drift.localhost"),
				fmt.Sprint(st["treeHash"], " ", st["hash"])
		})
		t.Logf("drift corrected after %s (driftPreventionInterval 3s)", time.Since(drifted).Round(time.Millisecond))
	})

	phase(t, "a burst of 100 structural changes reloads at most once per window and ends on the latest", func() {
		e.settle(ip)
		before := e.reloadCounts(ip)
		start := time.Now()
		for i := 1; i <= 100; i++ {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"haproxy-haptic.org/timeout-server":"%ds"}}}`, i)
			if _, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Patch(e.ctx, "echo", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		e.eventually("the last change runs", 60*time.Second, func() (bool, string) {
			return strings.Contains(e.podExec(pod, "cat", "/etc/haproxy/haproxy.cfg"), "timeout server 100s"), ""
		})
		elapsed := time.Since(start)
		e.settle(ip)
		after := e.reloadCounts(ip)
		windows := int(elapsed/(2*time.Second)) + 1
		if got := after.agent - before.agent; got < 1 || got > windows {
			t.Fatalf("%d reloads for 100 structural changes in %s; want 1..%d (one per 2 s window)", got, elapsed, windows)
		}
		t.Logf("100 structural changes → %d reloads in %s", after.agent-before.agent, elapsed.Round(time.Millisecond))
		e.eventually("echo still answers", 30*time.Second, func() (bool, string) {
			code, _, err := e.get(ip, echoHost, "/")
			return code == 200, fmt.Sprint(code, err)
		})
	})
}

// phase runs one step of a long test on the parent test (env helpers fail the
// parent, which a subtest must not do).
func phase(t *testing.T, name string, step func()) {
	t.Helper()
	t.Logf("--- %s", name)
	step()
}

// reloads counts reloads as the controller (metric) and the pod's agent see them.
type reloads struct {
	controller float64
	agent      int
}

func (e *env) reloadCounts(ip string) reloads {
	st := e.agentState(ip, agentPass)
	n, _ := st["reloads"].(float64)
	return reloads{controller: e.metric("haptic_haproxy_reloads_total", ""), agent: int(n)}
}

func (e *env) requireNoReload(ip string, before reloads, what string) {
	e.t.Helper()
	if after := e.reloadCounts(ip); after != before {
		e.t.Fatalf("%s reloaded HAProxy: controller %v → %v, agent %d → %d\ncontroller log:\n%s", what,
			before.controller, after.controller, before.agent, after.agent, e.reloadLog())
	}
}

// reloadLog is the controller's log lines about reloads, for failure messages.
func (e *env) reloadLog() string {
	var out []string
	for _, l := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(l, "mode=reload") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// settle waits until the pod's agent has run the same set for a second: earlier
// changes (and their paced reloads) are done.
func (e *env) settle(ip string) {
	e.t.Helper()
	last, since := "", time.Now()
	e.eventually("deployments settle", 60*time.Second, func() (bool, string) {
		st := e.agentState(ip, agentPass)
		h := fmt.Sprint(st["hash"], st["reloads"])
		if h != last {
			last, since = h, time.Now()
		}
		return time.Since(since) > 2500*time.Millisecond, h
	})
}

// createRoute creates a Service selecting the echo pods and an Ingress routing
// host+path to it: each route has its own backend.
func (e *env) createRoute(name, host, path string) {
	e.t.Helper()
	e.createService(name)
	prefix := networkingv1.PathTypePrefix
	class := e.ns
	_, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Create(e.ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
			Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: path, PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: name, Port: networkingv1.ServiceBackendPort{Name: "http"}}},
			}}}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create ingress %s: %v", name, err)
	}
}

func (e *env) deleteRoute(name string) {
	e.t.Helper()
	if err := e.c.Client.NetworkingV1().Ingresses(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("delete ingress %s: %v", name, err)
	}
	if err := e.c.Client.CoreV1().Services(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("delete service %s: %v", name, err)
	}
}

// podExec runs a command inside the agent container of a pod of the test's
// namespace (its mounts: the config and state volumes, writable).
func (e *env) podExec(pod string, argv ...string) string {
	e.t.Helper()
	tool, err := filepath.Abs("../../bin/haptic-cluster")
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, tool, append([]string{"pod-exec", e.ns + "/" + pod + "/agent"}, argv...)...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("pod-exec %s %v: %v\n%s", pod, argv, err, out)
	}
	return string(out)
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func maxDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return slices.Max(ds)
}
