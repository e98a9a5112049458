//go:build upgrade

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	"github.com/haproxy-haptic/haptic/internal/config"
)

// TestUpgradeFromPrevious (make test-upgrade): a cluster with Gateway API v1.4.1
// CRDs and the previous release's controller (HAPTIC_PREVIOUS_DIR: its worktree with
// bin/haptic, its libraries) serving an Ingress and three HTTPRoutes is upgraded
// while a request loop inside the cluster's network namespace asks every route all
// along: every answer must be 200. The new controller must then serve a route
// created after the upgrade.
//
//   - crds-first, as docs/upgrades.md advises: v1.6.3 CRDs server-side with the
//     safe-upgrades policy, then this tree's libraries and controller;
//   - controller-first: this tree's controller on the v1.4.1 CRDs first. It must
//     skip what they do not serve (tlsroutes v1: haptic_watch_resource_unserved),
//     serve the rest (a route created then answers), and watch TLSRoutes once the
//     CRD upgrade serves them (the metric goes away, without a restart).
func TestUpgradeFromPrevious(t *testing.T) {
	for _, order := range []string{"crds-first", "controller-first"} {
		t.Run(order, func(t *testing.T) { upgradeFromPrevious(t, order == "controller-first") })
	}
}

func upgradeFromPrevious(t *testing.T, controllerFirst bool) {
	prev := os.Getenv("HAPTIC_PREVIOUS_DIR")
	if prev == "" {
		t.Fatal("HAPTIC_PREVIOUS_DIR is not set: run make test-upgrade (it builds the previous release)")
	}
	e := setupWithStart(t, 1, librariesConfigFrom(t, prev), false)
	crds := e.c.Config.CRDDir()
	old := filepath.Join(e.c.Config.CacheDir, "gateway-api-v1.4.1-experimental-crds")
	if _, err := os.Stat(old); err != nil {
		t.Fatalf("v1.4.1 CRDs: %v (a cluster of a checkout pinned to v1.4.1 caches them there)", err)
	}
	// Back to v1.4.1: the policy refuses older CRDs, so it goes first.
	e.kubectl("delete", "--ignore-not-found", "-f", filepath.Join(crds, "gateway.networking.k8s.io_vap_safeupgrades.yaml"))
	e.kubectl("delete", "--ignore-not-found", "--wait", "-f", crds)
	e.kubectl("apply", "--server-side", "--force-conflicts", "-f", old)
	e.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
	t.Cleanup(func() { // whatever happened: the cluster's own CRDs again
		_, _ = e.c.Kubectl(context.Background(), "apply", "--server-side", "--force-conflicts", "-f", crds)
	})

	stopOld := startPrevious(t, e, prev)
	g := &gwEnv{env: e, class: e.ns}
	gw, err := gwclient.NewForConfig(e.c.REST)
	if err != nil {
		t.Fatal(err)
	}
	g.gw = gw
	if _, err := gw.GatewayV1().GatewayClasses().Create(e.ctx, &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: g.class},
		Spec: gwv1.GatewayClassSpec{ControllerName: gwv1.GatewayController(e.controllerName)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = gw.GatewayV1().GatewayClasses().Delete(context.Background(), g.class, metav1.DeleteOptions{})
	})
	if err := g.createGateway("edge"); err != nil {
		t.Fatal(err)
	}
	hosts := []string{"a.example.com", "b.example.com", "c.example.com"}
	for i, h := range hosts {
		if _, err := gw.GatewayV1().HTTPRoutes(e.ns).Create(e.ctx, httpRoute(fmt.Sprintf("r%d", i), "edge", h, "/"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	addr, err := g.gatewayAddress("edge", 180*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ingressIP := ""
	for _, ip := range e.haproxyPods() {
		ingressIP = ip
	}
	type target struct{ ip, port, host string }
	targets := []target{{ingressIP, "8080", "echo.localhost"}}
	for _, h := range hosts {
		targets = append(targets, target{addr, "80", h})
	}
	get := func(tg target) (int, error) {
		req, err := http.NewRequestWithContext(e.ctx, http.MethodGet, "http://"+net.JoinHostPort(tg.ip, tg.port)+"/", nil)
		if err != nil {
			return 0, err
		}
		req.Host = tg.host
		resp, err := e.http.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for _, tg := range targets {
		e.eventually("the previous release serves "+tg.host, 120*time.Second, func() (bool, string) {
			code, err := get(tg)
			return code == 200, fmt.Sprintf("code %d err %v", code, err)
		})
	}

	// The loop: every route in turn, until stopped (at most 10 minutes).
	var mu sync.Mutex
	counts := map[string]int{}
	var failures []string
	stop := make(chan struct{})
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		deadline := time.Now().Add(10 * time.Minute)
		for i := 0; time.Now().Before(deadline); i++ {
			select {
			case <-stop:
				return
			default:
			}
			tg := targets[i%len(targets)]
			code, err := get(tg)
			mu.Lock()
			counts[tg.host]++
			if code != 200 {
				failures = append(failures, fmt.Sprintf("%s %s: %d %v", time.Now().Format("15:04:05.000"), tg.host, code, err))
			}
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	step := func(what string) { t.Logf("%s: %s", time.Now().Format("15:04:05.000"), what) }
	time.Sleep(3 * time.Second)

	upgradeCRDs := func() {
		step("CRDs to v1.6.3 (server-side, with the safe-upgrades policy)")
		e.kubectl("apply", "--server-side", "--force-conflicts", "-f", crds)
		e.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
		time.Sleep(5 * time.Second)
	}
	if !controllerFirst {
		upgradeCRDs()
	}
	step("this tree's libraries")
	librariesConfig(t, "", "base", "ingress", "gateway")(e)
	e.kubectl("patch", "haproxytemplateconfig", "haptic-config", "--type=merge",
		"-p", `{"spec":{"gateways":{"controllerName":"`+e.controllerName+`"}}}`)
	time.Sleep(3 * time.Second)

	step("the previous controller stops, this tree's starts")
	stopOld()
	e.startController(nil)
	if controllerFirst {
		step("a route created under the new controller on v1.4.1 CRDs")
		if _, err := gw.GatewayV1().HTTPRoutes(e.ns).Create(e.ctx, httpRoute("mid", "edge", "mid.example.com", "/"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually("the new controller serves on v1.4.1 CRDs", 120*time.Second, func() (bool, string) {
			code, err := get(target{addr, "80", "mid.example.com"})
			return code == 200, fmt.Sprintf("code %d err %v", code, err)
		})
		if v := e.metric("haptic_watch_resource_unserved", `resource="tls-routes"`); v != 1 {
			t.Errorf("haptic_watch_resource_unserved{resource=tls-routes} = %v on v1.4.1 CRDs, want 1", v)
		}
		upgradeCRDs()
		e.eventually("the controller watches tlsroutes once they are served", 90*time.Second, func() (bool, string) {
			v, err := e.tryMetric("haptic_watch_resource_unserved", `resource="tls-routes"`)
			return err == nil && v == 0, fmt.Sprintf("unserved %v err %v", v, err)
		})
		step("tlsroutes watched")
	}

	step("a route created after the upgrade")
	if _, err := gw.GatewayV1().HTTPRoutes(e.ns).Create(e.ctx, httpRoute("after", "edge", "after.example.com", "/"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the new controller serves a new route", 120*time.Second, func() (bool, string) {
		code, err := get(target{addr, "80", "after.example.com"})
		return code == 200, fmt.Sprintf("code %d err %v", code, err)
	})
	e.eventually("the GatewayClass lists the new release's supportedFeatures", 60*time.Second, func() (bool, string) {
		gc, err := gw.GatewayV1().GatewayClasses().Get(e.ctx, g.class, metav1.GetOptions{})
		return err == nil && len(gc.Status.SupportedFeatures) > 0, fmt.Sprint(err)
	})
	time.Sleep(10 * time.Second)
	close(stop)
	<-loopDone

	mu.Lock()
	defer mu.Unlock()
	total := 0
	names := make([]string, 0, len(counts))
	for h, n := range counts {
		total += n
		names = append(names, fmt.Sprintf("%s %d", h, n))
	}
	sort.Strings(names)
	t.Logf("%d requests through the upgrade (%v), %d not 200", total, names, len(failures))
	for i, f := range failures {
		if i == 20 {
			t.Errorf("… %d more", len(failures)-20)
			break
		}
		t.Errorf("not served: %s", f)
	}
	if total < 100 {
		t.Errorf("only %d requests: the loop did not run through the upgrade", total)
	}
}

// librariesConfigFrom applies the previous release's libraries and overlay (as its
// make run did), merged by this tree's merger.
func librariesConfigFrom(t *testing.T, root string) func(*env) {
	return func(e *env) {
		var files []string
		for _, l := range []string{"base", "ingress", "gateway"} {
			files = append(files, filepath.Join(root, "charts/haptic/libraries", l+".yaml"))
		}
		files = append(files, filepath.Join(root, "deploy/local/30-haptic-overlay.yaml"))
		merged, err := config.MergeFiles(files...)
		if err != nil {
			t.Fatal(err)
		}
		delete(merged["spec"].(map[string]any), "validationTests")
		data, err := yaml.Marshal(merged)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "previous-config.yaml")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		e.applyFile(f)
	}
}

// startPrevious runs the previous release's `haptic run` inside the cluster's
// network namespace and returns a function that stops it (SIGTERM, then SIGKILL).
func startPrevious(t *testing.T, e *env, root string) func() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := ln.Addr().String()
	ln.Close()
	var out bytes.Buffer
	cmd := exec.Command("ip", "netns", "exec", e.c.Config.Netns, filepath.Join(root, "bin/haptic"), "run",
		"--kubeconfig", e.c.Config.Kubeconfig(), "--namespace", e.ns, "--config-name", "haptic-config",
		"--metrics-addr", metricsAddr, "--debug-port", "0", "--leader-elect=false", "--haproxy-binary", "haproxy")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
			if t.Failed() {
				t.Logf("previous controller log:\n%s", out.String())
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
