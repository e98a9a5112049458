package resilience

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHAProxyMasterKilled is case 3: the HAProxy master inside a pod is killed.
// HAProxy's container runs on: its main process, `haptic-agent launch`, tells the
// dead master's workers to finish and starts a new master at once (no container
// restart, no back-off); the agent, in its own container, adopts the new master on
// the last known good set and counts a restart (haproxyRestarts); the pod serves
// the same configuration again. Requests fail while no HAProxy listens (one pod,
// no other to fail over to): the table reports how many.
func TestHAProxyMasterKilled(t *testing.T) {
	e := setup(t)
	e.startController("replica-a")
	pod, ip := e.haproxyPod()
	e.eventually("echo served", 120*time.Second, func() (bool, string) {
		code, err := get(e.ctx, e.http, ip, echoHost)
		return code == 200, fmt.Sprint(code, err)
	})
	e.settle(ip)
	before := e.agentState(ip)
	haproxyBefore, agentBefore := containerRestarts(t, e, pod, "haproxy"), containerRestarts(t, e, pod, "agent")

	l := e.startLoad(ip, time.Minute)
	time.Sleep(2 * time.Second)
	killedPID := masterPID(t, e, pod)
	killed := time.Now()
	if err := syscall.Kill(killedPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var after = before
	e.eventually("the agent adopted the restarted HAProxy", 30*time.Second, func() (bool, string) {
		st, err := e.agent(ip).State(e.ctx)
		if err != nil {
			return false, err.Error()
		}
		after = st
		return st.HAProxyRestarts == before.HAProxyRestarts+1, fmt.Sprint(st.HAProxyRestarts)
	})
	e.eventually("echo served again", 30*time.Second, func() (bool, string) {
		code, err := get(e.ctx, e.http, ip, echoHost)
		return code == 200, fmt.Sprint(code, err)
	})
	took := time.Since(killed)
	time.Sleep(2 * time.Second)
	requests, failed, firstErr := l.stop()
	report(row{name: "3 HAProxy master SIGKILL", requests: requests, failed: failed, convergence: took,
		reloads: 0, note: fmt.Sprintf("haproxyRestarts %d; haproxy container restarts %d, agent container restarts %d; %s",
			after.HAProxyRestarts-before.HAProxyRestarts, containerRestarts(t, e, pod, "haproxy")-haproxyBefore,
			containerRestarts(t, e, pod, "agent")-agentBefore, firstErr)})
	if after.Hash != before.Hash {
		t.Errorf("restarted on %s, want the last good set %s", after.Hash, before.Hash)
	}
	if n := containerRestarts(t, e, pod, "haproxy") - haproxyBefore; n != 0 {
		t.Errorf("HAProxy's container restarted %d times, want 0 (its launcher restarts the master)", n)
	}
	if n := containerRestarts(t, e, pod, "agent") - agentBefore; n != 0 {
		t.Errorf("the agent's container restarted %d times, want 0", n)
	}
	if pid := masterPID(t, e, pod); pid == killedPID {
		t.Errorf("the pid file still names the killed master %d", pid)
	}
	if took > 15*time.Second {
		t.Errorf("served again only after %s", took)
	}
	if requests == 0 {
		t.Error("no requests were sent")
	}
}

// masterPID reads the HAProxy master's PID from the pod's pid file.
func masterPID(t *testing.T, e *env, pod string) int {
	t.Helper()
	out, err := exec.CommandContext(e.ctx, filepath.Join(root, "bin", "haptic-cluster"), "pod-exec", e.ns+"/"+pod+"/haproxy",
		"cat", "/var/lib/haptic-agent/haproxy.pid").CombinedOutput()
	if err != nil {
		t.Fatalf("read pid file: %v\n%s", err, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("pid file: %q", out)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		t.Fatalf("master %d is not running", pid)
	}
	return pid
}

// containerRestarts is the restart count of one container of the pod.
func containerRestarts(t *testing.T, e *env, pod, container string) int {
	t.Helper()
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(e.ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == container {
			return int(s.RestartCount)
		}
	}
	t.Fatalf("pod %s has no container %s", pod, container)
	return 0
}
