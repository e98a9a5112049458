package e2e

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// TestAgentRestartAndCredentials: an agent killed outright comes back serving the last
// config (the node restarts its container; HAProxy's runs on), and an apply with a wrong credential is
// refused without changing anything.
func TestAgentRestartAndCredentials(t *testing.T) {
	e := setup(t, 1)
	var pods map[string]string
	e.eventually("a ready HAProxy pod", 90*time.Second, func() (bool, string) {
		pods = e.haproxyPods()
		return len(pods) == 1, fmt.Sprint(pods)
	})
	name := firstKey(pods)
	ip := pods[name]
	e.eventually("the route", 90*time.Second, func() (bool, string) {
		code, _, err := e.get(ip, echoHost, "/")
		return code == 200, fmt.Sprint(code, err)
	})
	e.settle(ip) // the first config can be followed by another (what synced after it)
	before := e.agentState(ip, agentPass)

	t.Run("wrong credential is refused", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(e.ctx, http.MethodPut, "http://"+net.JoinHostPort(ip, "5555")+"/v1/config",
			bytes.NewReader([]byte(`{"hash":"x","files":[]}`)))
		req.SetBasicAuth(agentUser, "not-the-password")
		resp, err := e.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong credential answered %d, want 401", resp.StatusCode)
		}
		if after := e.agentState(ip, agentPass); after["hash"] != before["hash"] {
			t.Fatalf("state changed: %v → %v", before["hash"], after["hash"])
		}
	})

	t.Run("killed agent comes back serving the last config", func(t *testing.T) {
		pid := agentPID(t, e.ns+"/"+name)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill agent %d: %v", pid, err)
		}
		e.eventually("container restarted", 60*time.Second, func() (bool, string) {
			p, err := e.c.Client.CoreV1().Pods(e.ns).Get(e.ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Sprint(err)
			}
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == "agent" { // HAProxy runs in a container of its own
					return cs.RestartCount >= 1 && cs.Ready, fmt.Sprintf("restarts %d ready %v", cs.RestartCount, cs.Ready)
				}
			}
			return false, "no agent container status"
		})
		e.eventually("the route after restart", 30*time.Second, func() (bool, string) {
			code, _, err := e.get(ip, echoHost, "/")
			return code == 200, fmt.Sprint(code, err)
		})
		after := e.agentState(ip, agentPass)
		if after["hash"] != before["hash"] || after["treeHash"] != before["hash"] {
			t.Fatalf("after restart the agent reports hash %v tree %v, want %v", after["hash"], after["treeHash"], before["hash"])
		}
	})
}

func (e *env) agentState(ip, password string) map[string]any {
	e.t.Helper()
	req, _ := http.NewRequestWithContext(e.ctx, http.MethodGet, "http://"+net.JoinHostPort(ip, "5555")+"/v1/state", nil)
	req.SetBasicAuth(agentUser, password)
	resp, err := e.http.Do(req)
	if err != nil {
		e.t.Fatalf("agent state: %v", err)
	}
	defer resp.Body.Close()
	var st map[string]any
	if err := jsonDecode(resp.Body, &st); err != nil || resp.StatusCode != 200 {
		e.t.Fatalf("agent state: %d %v", resp.StatusCode, err)
	}
	return st
}

// agentPID finds the haptic-agent process of pod (ns/name) — by the node's pod
// marker, never by IP alone: other clusters on the machine reuse pod IPs.
func agentPID(t *testing.T, pod string) int {
	t.Helper()
	pids, err := node.PodProcesses(pod)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(string(data), "\x00")
		if len(args) > 1 && strings.HasSuffix(args[0], "haptic-agent") && args[1] != "launch" {
			return pid
		}
	}
	t.Fatalf("no haptic-agent process in pod %s (processes %v)", pod, pids)
	return 0
}
