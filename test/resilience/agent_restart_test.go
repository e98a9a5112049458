package resilience

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// TestAgentRestarted is case 4: the agent process of an HAProxy pod is SIGKILLed
// while HAProxy runs; the node restarts the container, and the new agent adopts
// the running HAProxy master (internal/agent, adopt.go). Under load: 0 failed
// requests; the same master serves throughout; HAProxy's own reload counter
// (`show proc` on the master socket) and the controller's
// haptic_haproxy_reloads_total do not move; the adopted state reads back without
// divergence; and the controller's next change applies at runtime, without a
// reload.
func TestAgentRestarted(t *testing.T) {
	e := setup(t)
	metrics := "127.0.0.1:19311"
	e.startControllerWithMetrics("replica-a", metrics)
	pod, ip := e.haproxyPod()
	e.eventually("echo served", 120*time.Second, func() (bool, string) {
		code, err := get(e.ctx, e.http, ip, echoHost)
		return code == 200, fmt.Sprint(code, err)
	})
	e.settle(ip)
	before := e.agentState(ip)
	master := masterPID(t, e, pod)
	reloadsBefore := e.counter(metrics, "haptic_haproxy_reloads_total")
	divergenceBefore := e.counter(metrics, "haptic_deployment_runtime_divergence_total") +
		e.counter(metrics, "haptic_runtime_map_divergence_total")
	restartsBefore := containerRestarts(t, e, pod)

	l := e.startLoad(ip, 2*time.Minute)
	time.Sleep(2 * time.Second)
	agentPID := e.agentProcess(pod)
	killed := time.Now()
	if err := syscall.Kill(agentPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.eventually("the restarted agent answers", 60*time.Second, func() (bool, string) {
		if n := containerRestarts(t, e, pod); n == restartsBefore {
			return false, "container not restarted yet"
		}
		_, err := e.agent(ip).State(e.ctx)
		return err == nil, fmt.Sprint(err)
	})
	back := time.Since(killed)
	adopted := e.agentState(ip)

	e.createIngress("after-agent-restart", "after-agent-restart.localhost", "echo")
	changed := time.Now()
	e.eventually("the route created after the agent's restart is served", 30*time.Second, func() (bool, string) {
		code, err := get(e.ctx, e.http, ip, "after-agent-restart.localhost")
		return code == 200, fmt.Sprint(code, err)
	})
	served := time.Since(changed)
	e.settle(ip)
	requests, failed, firstErr := l.stop()
	after := e.agentState(ip)
	reloads := after.Reloads - before.Reloads
	controllerReloads := e.counter(metrics, "haptic_haproxy_reloads_total") - reloadsBefore
	divergence := e.counter(metrics, "haptic_deployment_runtime_divergence_total") +
		e.counter(metrics, "haptic_runtime_map_divergence_total") - divergenceBefore
	report(row{name: "4 agent SIGKILL (HAProxy adopted)", requests: requests, failed: failed, convergence: back,
		reloads: reloads, note: fmt.Sprintf("agent back after %s; same master %t; controller reloads %d; divergence %d; next route served after %s; %s",
			back.Round(10*time.Millisecond), masterPID(t, e, pod) == master, controllerReloads, divergence, served.Round(10*time.Millisecond), firstErr)})

	if failed > 0 {
		t.Errorf("%d of %d requests failed (first: %s)", failed, requests, firstErr)
	}
	if pid := masterPID(t, e, pod); pid != master {
		t.Errorf("HAProxy master %d after the agent's restart, want the adopted %d", pid, master)
	}
	if reloads != 0 || controllerReloads != 0 {
		t.Errorf("HAProxy reloaded: its counter moved by %d, haptic_haproxy_reloads_total by %d", reloads, controllerReloads)
	}
	if adopted.Hash != before.Hash {
		t.Errorf("the new agent reports %s, want the running %s", adopted.Hash, before.Hash)
	}
	if v := adopted.LastVerify; v == nil || v.MapDivergence != 0 || v.ServerDivergence != 0 || v.Error != "" {
		t.Errorf("the read-back after adoption: %+v, want no divergence", v)
	}
	if after.MapDivergence != 0 || after.ServerDivergence != 0 || divergence != 0 {
		t.Errorf("divergence after the restart: agent maps %d servers %d, controller %d", after.MapDivergence, after.ServerDivergence, divergence)
	}
	if after.LastApply == nil || after.LastApply.Mode != "runtime" {
		t.Errorf("the change after the restart was applied as %+v, want runtime", after.LastApply)
	}
	if requests == 0 {
		t.Error("no requests were sent")
	}
}

// agentProcess is the PID of the agent in the HAProxy pod (its container's main
// process; HAProxy's processes carry the pod's marker too).
func (e *env) agentProcess(pod string) int {
	e.t.Helper()
	pids, err := node.PodProcesses(e.ns + "/" + pod)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, pid := range pids {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		if argv0, _, _ := bytes.Cut(cmdline, []byte{0}); strings.HasSuffix(string(argv0), "/"+agentBinary) {
			return pid
		}
	}
	e.t.Fatalf("no agent process among pod %s's processes %v", pod, pids)
	return 0
}

// counter reads a counter (summed over its series) from a controller's /metrics.
func (e *env) counter(addr, name string) int {
	e.t.Helper()
	var n int
	e.eventually("metrics of "+addr, 30*time.Second, func() (bool, string) {
		var err error
		n, err = scrapeCounter(e.http, "http://"+addr+"/metrics", name)
		return err == nil, fmt.Sprint(err)
	})
	return n
}
