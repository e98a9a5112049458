package node

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestContainerLeftoversKillsOneContainer: when a container's main process exits,
// the node ends the processes that container left — also one in a process group
// of its own, as an HAProxy master started by a single-container agent — and not
// the pod's other containers (HAProxy in a container of its own survives an agent
// container's restart, as under a kubelet).
func TestContainerLeftoversKillsOneContainer(t *testing.T) {
	uid := "test-uid-" + time.Now().Format("150405.000000000")
	start := func(container string) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), "HAPTIC_POD=ns/pod", "HAPTIC_POD_UID="+uid, "HAPTIC_CONTAINER="+container)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = cmd.Wait() }()
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		return cmd
	}
	agentLeftover, haproxy := start("agent"), start("haproxy")
	killContainerLeftovers(uid, "agent")
	if !isZombie(agentLeftover.Process.Pid) {
		t.Errorf("the agent container's leftover %d survived its container", agentLeftover.Process.Pid)
	}
	if isZombie(haproxy.Process.Pid) {
		t.Errorf("the haproxy container's process %d was killed with the agent's container", haproxy.Process.Pid)
	}
}
