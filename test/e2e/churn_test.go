package e2e

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGatewayChurn: Gateways and their HTTPRoutes are created and deleted in
// parallel for a sustained period (30 s in make test; HAPTIC_CHURN_DURATION
// longer) while a control Gateway lives throughout. Every check routes correctly
// (a churned Gateway's routes answer 200 through it and 404 through the control
// Gateway, and the control's routes answer through it at every round); deleted
// Gateways leave no Deployment, Service or HAProxyCfg behind; the control
// Gateway's runtime host.map never holds another Gateway's hosts; status writes
// stay bounded per object; and after the last change the controller is quiet —
// no render and no status write for 10 s.
func TestGatewayChurn(t *testing.T) {
	duration := 30 * time.Second
	if v := os.Getenv("HAPTIC_CHURN_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("HAPTIC_CHURN_DURATION=%q: %v", v, err)
		}
		duration = d
	}
	const slots, routesPerGateway = 2, 3
	g := setupGateways(t, "")
	if err := g.createGateway("control"); err != nil {
		t.Fatal(err)
	}
	control, err := g.gatewayAddress("control", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for i := range routesPerGateway {
		if _, err := g.gw.GatewayV1().HTTPRoutes(g.ns).Create(g.ctx, httpRoute(fmt.Sprintf("control-%d", i), "control",
			fmt.Sprintf("control-%d.example.com", i), "/"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	checkControl := func() error {
		for i := range routesPerGateway {
			if code, _, err := g.getGateway(control, fmt.Sprintf("control-%d.example.com", i), "/"); code != 200 {
				return fmt.Errorf("control-%d through the control Gateway: %d %v", i, code, err)
			}
		}
		return nil
	}
	g.eventually("the control routes", time.Minute, func() (bool, string) {
		err := checkControl()
		return err == nil, fmt.Sprint(err)
	})
	writesBefore := g.metric("haptic_status_writes_total", "")

	// Each slot cycles: create a Gateway and its routes, check routing and
	// isolation, delete them, until the period ends.
	var mu sync.Mutex
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	cycles, checks := 0, 0
	end := time.Now().Add(duration)
	var wg sync.WaitGroup
	for s := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for gen := 0; time.Now().Before(end) && g.ctx.Err() == nil; gen++ {
				name := fmt.Sprintf("churn-%d-%d", s, gen)
				if err := g.createGateway(name); err != nil {
					fail("create %s: %v", name, err)
					return
				}
				addr, err := g.gatewayAddress(name, 90*time.Second)
				if err != nil {
					fail("%v", err)
					return
				}
				for i := range routesPerGateway {
					if _, err := g.gw.GatewayV1().HTTPRoutes(g.ns).Create(g.ctx, httpRoute(fmt.Sprintf("%s-r%d", name, i), name,
						fmt.Sprintf("%s-r%d.example.com", name, i), "/"), metav1.CreateOptions{}); err != nil {
						fail("create route: %v", err)
						return
					}
				}
				for i := range routesPerGateway {
					host := fmt.Sprintf("%s-r%d.example.com", name, i)
					deadline := time.Now().Add(30 * time.Second)
					for {
						code, _, err := g.getGateway(addr, host, "/")
						if code == 200 {
							break
						}
						if code != 404 || time.Now().After(deadline) { // 404 = not yet; anything else is wrong
							fail("%s through %s: %d %v", host, name, code, err)
							return
						}
						time.Sleep(10 * time.Millisecond)
					}
					if code, _, err := g.getGateway(control, host, "/"); code != 404 {
						fail("%s is reachable through the control Gateway: %d %v", host, code, err)
					}
					if code, _, err := g.getGateway(addr, "control-0.example.com", "/"); code != 404 {
						fail("control-0 is reachable through %s: %d %v", name, code, err)
					}
				}
				if err := checkControl(); err != nil {
					fail("%v", err)
				}
				for i := range routesPerGateway {
					_ = g.gw.GatewayV1().HTTPRoutes(g.ns).Delete(g.ctx, fmt.Sprintf("%s-r%d", name, i), metav1.DeleteOptions{})
				}
				if err := g.gw.GatewayV1().Gateways(g.ns).Delete(g.ctx, name, metav1.DeleteOptions{}); err != nil {
					fail("delete %s: %v", name, err)
					return
				}
				mu.Lock()
				cycles++
				checks += 2*routesPerGateway + 1
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d failures during churn:\n%s", len(failures), strings.Join(failures, "\n"))
	}
	if cycles < slots {
		t.Fatalf("only %d Gateway cycles in %s", cycles, duration)
	}

	// Nothing of the churned Gateways survives them.
	g.eventually("no Deployment, Service or HAProxyCfg of a churned Gateway", 2*time.Minute, func() (bool, string) {
		deps := g.kubectl("get", "deployments", "-o", "jsonpath={.items[*].metadata.annotations.haproxy-haptic\\.org/gateway}")
		svcs := g.kubectl("get", "services", "-o", "jsonpath={.items[*].metadata.labels.gateway\\.networking\\.k8s\\.io/gateway-name}")
		cfgs := g.kubectl("get", "haproxycfgs", "-o", "jsonpath={.items[*].metadata.annotations.haproxy-haptic\\.org/gateway}")
		all := deps + " " + svcs + " " + cfgs
		return !strings.Contains(all, "churn-"), fmt.Sprintf("deployments %q services %q haproxycfgs %q", deps, svcs, cfgs)
	})
	// Their pods end within their grace period; each step of that is a cluster
	// change the controller sees, so quiescence is measured after the last one.
	g.eventually("no pod of a churned Gateway", 2*time.Minute, func() (bool, string) {
		pods := g.kubectl("get", "pods", "-o", "jsonpath={.items[*].metadata.labels.gateway\\.networking\\.k8s\\.io/gateway-name}")
		return !strings.Contains(pods, "churn-"), pods
	})
	// The control Gateway's pods run exactly its own routes.
	pods := g.kubectl("get", "pods", "-l", "gateway.networking.k8s.io/gateway-name=control", "-o", "jsonpath={.items[*].metadata.name}")
	for _, pod := range strings.Fields(pods) {
		hostMap := g.podExec(pod, "cat", "/etc/haproxy/maps/host.map")
		if strings.Contains(hostMap, "churn-") {
			t.Errorf("the control Gateway's host.map holds a churned Gateway's host:\n%s", hostMap)
		}
		for i := range routesPerGateway {
			if !strings.Contains(hostMap, fmt.Sprintf("control-%d.example.com", i)) {
				t.Errorf("the control Gateway's host.map lacks control-%d:\n%s", i, hostMap)
			}
		}
	}
	if err := checkControl(); err != nil {
		t.Fatal(err)
	}
	// Status writes: each Gateway and route is written a bounded number of times
	// (Accepted, Programmed, addresses) — no oscillation.
	objects := float64(cycles * (1 + routesPerGateway))
	writes := g.metric("haptic_status_writes_total", "") - writesBefore
	// Quiescence: nothing renders or writes status for 10 s after the last change.
	time.Sleep(3 * time.Second)
	renders, statusWrites := g.metric("haptic_renders_total", ""), g.metric("haptic_status_writes_total", "")
	time.Sleep(10 * time.Second)
	rendersQuiet := g.metric("haptic_renders_total", "") - renders
	writesQuiet := g.metric("haptic_status_writes_total", "") - statusWrites
	checkBudgets(t, fmt.Sprintf("TestGatewayChurn: %d Gateway cycles (%d slots, %d routes each) in %s, %d routing checks",
		cycles, slots, routesPerGateway, duration, checks), []budgetRow{
		{"routing or isolation failures", float64(len(failures)), 0, ""},
		{"status writes per churned object", writes / objects, 8, ""},
		{"renders in the 10 s after the last change", rendersQuiet, 0, ""},
		{"status writes in the 10 s after the last change", writesQuiet, 0, ""},
	})
}
