package resilience

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// TestAgentRestarted is case 4: the agent's container of an HAProxy pod is
// restarted while HAProxy runs — every process of that container SIGKILLed, as a
// container runtime ends its cgroup, and the node restarts it per restartPolicy.
// HAProxy runs in a container of its own (the chart's layout, deploy/local), which
// keeps running (its launcher and the master it runs); the new agent adopts its master (internal/agent, adopt.go). Under
// load: 0 failed requests; the same master serves throughout; HAProxy's container
// does not restart; HAProxy's own reload counter (`show proc` on the master socket)
// and the controller's haptic_haproxy_reloads_total do not move; the adopted state
// reads back without divergence; and the controller's next change applies at
// runtime, without a reload.
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
	agentBefore, haproxyBefore := containerRestarts(t, e, pod, "agent"), containerRestarts(t, e, pod, "haproxy")

	l := e.startLoad(ip, 2*time.Minute)
	time.Sleep(2 * time.Second)
	agentPIDs := e.containerProcesses(pod, "agent")
	killed := time.Now()
	for _, pid := range agentPIDs {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually("the restarted agent answers", 60*time.Second, func() (bool, string) {
		if n := containerRestarts(t, e, pod, "agent"); n == agentBefore {
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
	haproxyRestarts := containerRestarts(t, e, pod, "haproxy") - haproxyBefore
	report(row{name: "4 agent container restarted (HAProxy adopted)", requests: requests, failed: failed, convergence: back,
		reloads: reloads, note: fmt.Sprintf("%d agent processes killed; agent back after %s; same master %t; haproxy container restarts %d; controller reloads %d; divergence %d; next route served after %s; %s",
			len(agentPIDs), back.Round(10*time.Millisecond), masterPID(t, e, pod) == master, haproxyRestarts, controllerReloads, divergence, served.Round(10*time.Millisecond), firstErr)})

	if failed > 0 {
		t.Errorf("%d of %d requests failed (first: %s)", failed, requests, firstErr)
	}
	if haproxyRestarts != 0 {
		t.Errorf("HAProxy's container restarted %d times with the agent's", haproxyRestarts)
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

// containerProcesses are the PIDs of one container of the pod (the node marks
// them with HAPTIC_CONTAINER); none is an error.
func (e *env) containerProcesses(pod, container string) []int {
	e.t.Helper()
	pids, err := node.PodProcesses(e.ns + "/" + pod)
	if err != nil {
		e.t.Fatal(err)
	}
	var mine []int
	for _, pid := range pids {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(environ, []byte{0}) {
			if string(kv) == "HAPTIC_CONTAINER="+container {
				mine = append(mine, pid)
				break
			}
		}
	}
	if len(mine) == 0 {
		e.t.Fatalf("no process of container %s among pod %s's processes %v", container, pod, pids)
	}
	return mine
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
