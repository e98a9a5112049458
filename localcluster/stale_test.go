package localcluster_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/localcluster/cluster"
	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
	"github.com/haproxy-haptic/haptic/localcluster/netns"
	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// TestUpClearsAKilledRun is what CI meets after a session is killed: every
// process ended, but namespaces and files left behind. It uses a second,
// private cluster (own network namespace and state directory) so the shared
// one is not disturbed: up, run a pod, SIGKILL everything, up again (which must
// clear the leftovers and work), then down (which must leave nothing).
func TestUpClearsAKilledRun(t *testing.T) {
	shared := clustertest.Start(t) // builds bin/haptic-cluster, checks prerequisites
	cfg := shared.Config
	cfg.Netns = fmt.Sprintf("hstale%d", os.Getpid()%10000)
	cfg.StateDir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	t.Cleanup(func() { _ = cluster.Down(cfg, &bytes.Buffer{}) })

	var out bytes.Buffer
	started := time.Now()
	if err := cluster.Up(ctx, cfg, &out); err != nil {
		t.Fatalf("first up: %v\n%s", err, out.String())
	}
	t.Logf("private cluster up in %.1fs", time.Since(started).Seconds())
	client, _, err := cluster.Clientset(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "survivor", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "main", Image: "busybox", Command: []string{"sleep", "600"},
		}}},
	}
	waitFor(t, 30*time.Second, "default ServiceAccount", func() (bool, string, error) {
		_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err), nil
	})
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	waitProcessCount(t, "default/survivor", 1, 30*time.Second)

	// A dead scheduler is restarted alone; the cluster keeps its objects.
	killComponent(t, cfg, "kube-scheduler")
	out.Reset()
	if err := cluster.Up(ctx, cfg, &out); err != nil {
		t.Fatalf("up with a dead scheduler: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "restarted kube-scheduler") {
		t.Errorf("up did not restart just the scheduler:\n%s", out.String())
	}
	if _, err := client.CoreV1().Pods("default").Get(ctx, "survivor", metav1.GetOptions{}); err != nil {
		t.Errorf("repairing the scheduler lost the pod: %v", err)
	}

	// The session dies: every process of the private cluster is SIGKILLed.
	killed := killEverything(t, cfg)
	t.Logf("SIGKILLed %d processes; netns and files stay behind", killed)
	if !netns.Exists(cfg.Netns) {
		t.Fatal("netns vanished with the processes; the test would not exercise stale cleanup")
	}

	out.Reset()
	started = time.Now()
	if err := cluster.Up(ctx, cfg, &out); err != nil {
		t.Fatalf("up after a killed run: %v\n%s", err, out.String())
	}
	t.Logf("up after a killed run in %.1fs", time.Since(started).Seconds())
	if !strings.Contains(out.String(), "clearing what an earlier run left behind") {
		t.Errorf("up did not clear the killed run:\n%s", out.String())
	}
	if _, err := client.CoreV1().Pods("default").Get(ctx, "survivor", metav1.GetOptions{}); err == nil {
		t.Error("the pod of the killed run survived: etcd data was not reset")
	}

	out.Reset()
	if err := cluster.Down(cfg, &out); err != nil {
		t.Fatalf("down: %v", err)
	}
	assertNothingLeft(t, cfg)
}

// killEverything SIGKILLs the processes recorded in pid files and the pod
// processes of the cluster, as a killed session does.
func killEverything(t *testing.T, cfg cluster.Config) int {
	t.Helper()
	var pids []int
	files, _ := filepath.Glob(filepath.Join(cfg.RunDir(), "*.pid"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.Fields(string(data))[0])
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	podPIDs, err := clusterPodProcesses(cfg.Netns)
	if err != nil {
		t.Fatal(err)
	}
	pids = append(pids, podPIDs...)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// A killed session's processes have ended by the time the next one starts.
	for _, pid := range pids {
		waitGone(t, pid, strconv.Itoa(pid))
	}
	return len(pids)
}

// clusterPodProcesses lists container processes marked as this cluster's.
func clusterPodProcesses(clusterNetns string) ([]int, error) {
	all, err := node.PodProcesses("")
	if err != nil {
		return nil, err
	}
	var mine []int
	for _, pid := range all {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(environ, []byte("\x00HAPTIC_CLUSTER="+clusterNetns+"\x00")) {
			mine = append(mine, pid)
		}
	}
	return mine, nil
}

func assertNothingLeft(t *testing.T, cfg cluster.Config) {
	t.Helper()
	if netns.Exists(cfg.Netns) {
		t.Errorf("netns %s left behind", cfg.Netns)
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), cfg.Netns+"-p-") {
			t.Errorf("pod netns %s left behind", e.Name())
		}
	}
	if pids, err := clusterPodProcesses(cfg.Netns); err != nil || len(pids) > 0 {
		t.Errorf("pod processes left behind: %v %v", pids, err)
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mountinfo), cfg.StateDir) {
		t.Errorf("mounts under %s left behind", cfg.StateDir)
	}
	files, _ := filepath.Glob(filepath.Join(cfg.RunDir(), "*.pid"))
	if len(files) > 0 {
		t.Errorf("pid files left behind: %v", files)
	}
}

// killComponent SIGKILLs one recorded component and waits until it is gone.
func killComponent(t *testing.T, cfg cluster.Config, name string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cfg.RunDir(), name+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.Fields(string(data))[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s: %v", name, err)
	}
	waitGone(t, pid, name)
}

// waitGone waits until a SIGKILLed process has exited (or is a zombie).
func waitGone(t *testing.T, pid int, name string) {
	t.Helper()
	waitFor(t, 15*time.Second, name+" gone", func() (bool, string, error) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		gone := err != nil || strings.Contains(string(stat), ") Z ")
		return gone, "still alive", nil
	})
}
