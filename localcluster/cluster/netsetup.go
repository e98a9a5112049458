package cluster

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// createNetns creates the namespace, brings lo up and adds the API server address.
func createNetns(cfg Config) error {
	steps := [][]string{
		{"netns", "add", cfg.Netns},
		{"-n", cfg.Netns, "link", "set", "lo", "up"},
		{"-n", cfg.Netns, "addr", "add", APIServerIP + "/32", "dev", "lo"},
	}
	for _, args := range steps {
		if err := runIP(args...); err != nil {
			return err
		}
	}
	// Pods have their own namespaces routed through this one: forwarding
	// here (and only here; the sysctl is per namespace) carries pod-to-pod
	// traffic. There is no route out, so nothing is forwarded off the machine.
	return runIP("netns", "exec", cfg.Netns, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward")
}

func runIP(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// processesInNetns lists the PIDs whose network namespace is the cluster's.
func processesInNetns(name string) ([]int, error) {
	inode, err := netns.Inode(name)
	if err != nil {
		return nil, err
	}
	want := fmt.Sprintf("net:[%d]", inode)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("read /proc: %w", err)
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		link, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net"))
		if err == nil && link == want {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// killNetnsProcesses ends every process left in the namespace: SIGTERM, a short
// grace, then SIGKILL. These are processes a previous run of ours started.
func killNetnsProcesses(name string, grace time.Duration) error {
	if !netns.Exists(name) {
		return nil
	}
	pids, err := processesInNetns(name)
	if err != nil {
		return err
	}
	records := make([]pidRecord, 0, len(pids))
	for _, pid := range pids {
		r := pidRecord{PID: pid, StartTime: processStartTime(pid)}
		records = append(records, r)
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for _, r := range records {
		if !waitGone(r, time.Until(deadline)) {
			_ = syscall.Kill(r.PID, syscall.SIGKILL)
		}
	}
	for _, r := range records {
		if !waitGone(r, 5*time.Second) {
			return fmt.Errorf("process %d in netns %s survived SIGKILL", r.PID, name)
		}
	}
	return nil
}

// deleteNetns removes the namespace if present.
func deleteNetns(name string) error {
	if !netns.Exists(name) {
		return nil
	}
	if err := runIP("netns", "del", name); err != nil {
		// A killed run may leave the mount point without a live namespace behind.
		_ = syscall.Unmount(netns.Path(name), syscall.MNT_DETACH)
		if rmErr := os.Remove(netns.Path(name)); rmErr != nil && !os.IsNotExist(rmErr) {
			return fmt.Errorf("remove stale netns %s: %w (after %v)", name, rmErr, err)
		}
	}
	return nil
}

// staleMounts lists mount points under the given roots, deepest first.
func staleMounts(roots ...string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("open mountinfo: %w", err)
	}
	defer f.Close()
	var found []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 5 {
			continue
		}
		mountPoint := unescapeMountPath(fields[4])
		for _, root := range roots {
			if mountPoint == root || strings.HasPrefix(mountPoint, root+"/") {
				found = append(found, mountPoint)
			}
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	// Deepest first, so nested mounts go before their parents.
	for i := 0; i < len(found); i++ {
		for j := i + 1; j < len(found); j++ {
			if len(found[j]) > len(found[i]) {
				found[i], found[j] = found[j], found[i]
			}
		}
	}
	return found, nil
}

func unescapeMountPath(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

// unmountStale detaches every mount left under the state directory.
func unmountStale(cfg Config) error {
	mounts, err := staleMounts(cfg.StateDir)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount stale %s: %w", m, err)
		}
	}
	return nil
}

// deletePodNetns removes pod namespaces (<netns>-p-*) visible here. The node
// creates them in its own mount namespace, so normally they vanish with it;
// this catches any that were made visible to the root namespace.
func deletePodNetns(cfg Config) error {
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("list netns: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), cfg.Netns+"-p-") {
			if err := deleteNetns(e.Name()); err != nil {
				return err
			}
		}
	}
	return nil
}
