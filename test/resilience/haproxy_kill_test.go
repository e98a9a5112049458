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

// TestHAProxyMasterKilled is case 3: the HAProxy master inside a pod is killed; the
// agent starts it again on the last known good set without its container
// restarting; the pod serves the same configuration again. Requests fail while no
// HAProxy listens (one pod, no other to fail over to): the table reports how many.
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
	restartsBefore := containerRestarts(t, e, pod)

	l := e.startLoad(ip, time.Minute)
	time.Sleep(2 * time.Second)
	pid := masterPID(t, e, pod)
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var after = before
	e.eventually("the agent restarted HAProxy", 30*time.Second, func() (bool, string) {
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
		reloads: 0, note: fmt.Sprintf("agent restarts %d, container restarts %d; %s", after.HAProxyRestarts-before.HAProxyRestarts,
			containerRestarts(t, e, pod)-restartsBefore, firstErr)})
	if after.Hash != before.Hash {
		t.Errorf("restarted on %s, want the last good set %s", after.Hash, before.Hash)
	}
	if n := containerRestarts(t, e, pod) - restartsBefore; n != 0 {
		t.Errorf("the container restarted %d times: the agent should restart HAProxy itself", n)
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

func containerRestarts(t *testing.T, e *env, pod string) int {
	t.Helper()
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(e.ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range p.Status.ContainerStatuses {
		n += int(s.RestartCount)
	}
	return n
}
