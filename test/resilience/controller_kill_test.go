package resilience

import (
	"fmt"
	"testing"
	"time"
)

// TestControllerKilled is case 1: two controller replicas; every 10 s the leader
// is SIGKILLed (and started again under a new identity, as a force-deleted pod
// comes back) and a new route is created at once. Under load: 0 failed requests;
// every route is served within lease duration + 5 s; 0 reloads (the new leader
// reads what the pod runs and adds the route at runtime).
func TestControllerKilled(t *testing.T) {
	window := 30 * time.Second
	if full() {
		window = 2 * time.Minute
	}
	e := setup(t)
	replicas := map[string]*controller{}
	for _, id := range []string{"replica-a", "replica-b"} {
		replicas[id] = e.startController(id)
	}
	_, ip := e.haproxyPod()
	e.eventually("echo served", 120*time.Second, func() (bool, string) {
		code, err := get(e.ctx, e.http, ip, echoHost)
		return code == 200, fmt.Sprint(code, err)
	})
	e.settle(ip)
	before := e.agentState(ip)

	l := e.startLoad(ip, window+lease.duration+30*time.Second)
	var worst time.Duration
	late := 0
	start := time.Now()
	for i := 0; time.Since(start) < window; i++ {
		holder := e.leader()
		victim, alive := replicas[holder]
		if alive {
			victim.kill()
			delete(replicas, holder)
			id := fmt.Sprintf("replica-%d", i)
			replicas[id] = e.startController(id)
		}
		name, host := fmt.Sprintf("kill-%d", i), fmt.Sprintf("kill-%d.localhost", i)
		changed := time.Now()
		e.createRoute(name, host)
		var led time.Duration
		served := false
		for !served && time.Since(changed) < lease.duration+30*time.Second {
			if l := e.leader(); led == 0 && l != holder && l != "" {
				led = time.Since(changed)
			}
			code, _ := get(e.ctx, e.http, ip, host)
			served = code == 200
			if !served {
				time.Sleep(100 * time.Millisecond)
			}
		}
		took := time.Since(changed)
		worst = max(worst, took)
		if !served || took > lease.duration+5*time.Second {
			late++
			t.Errorf("route %d served after %s (served: %t), want within lease duration + 5 s = %s", i, took, served, lease.duration+5*time.Second)
		}
		t.Logf("killed %q; a new leader after %s; route %d served after %s", holder, led.Round(10*time.Millisecond), i, took.Round(10*time.Millisecond))
		if rest := 10*time.Second - took; rest > 0 && time.Since(start)+rest < window {
			time.Sleep(rest)
		} else if rest > 0 {
			break
		}
	}
	requests, failed, firstErr := l.stop()
	after := e.agentState(ip)
	reloads := after.Reloads - before.Reloads
	report(row{name: fmt.Sprintf("1 controller SIGKILL every 10s for %s", window), requests: requests, failed: failed,
		convergence: worst, reloads: reloads, note: fmt.Sprintf("lease %s; %d routes late; %s", lease.duration, late, firstErr)})
	if failed > 0 {
		t.Errorf("%d of %d requests failed (first: %s)", failed, requests, firstErr)
	}
	if reloads != 0 || after.HAProxyRestarts != before.HAProxyRestarts {
		t.Errorf("HAProxy reloaded %d times (restarts %d → %d) during the controller kills", reloads, before.HAProxyRestarts, after.HAProxyRestarts)
	}
	if requests == 0 {
		t.Error("no requests were sent")
	}
}
