package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// Up starts the cluster, or returns at once if it already runs. Progress goes to out.
func Up(ctx context.Context, cfg Config, out io.Writer) error {
	start := time.Now()
	if err := cfg.CheckBinaries(); err != nil {
		return err
	}
	lock, err := Lock(cfg, "up.lock", false)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if _, err := os.Stat(nodeArgs(cfg)[0]); err != nil {
		return fmt.Errorf("haptic-cluster binary for the node not found in %s: %w", cfg.BinDir, err)
	}
	if Healthy(ctx, cfg) == nil {
		lock.Unlock() // RestartStaleNode takes it again
		fmt.Fprintf(out, "cluster already up (netns %s, kubeconfig %s)\n", cfg.Netns, cfg.Kubeconfig())
		return RestartStaleNode(ctx, cfg, out)
	}
	if dead, ok := repairable(ctx, cfg); ok {
		return repair(ctx, cfg, dead, out)
	}
	fmt.Fprintln(out, "clearing what an earlier run left behind")
	if err := clearStale(cfg); err != nil {
		return fmt.Errorf("clear stale cluster state: %w", err)
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	if err := createNetns(cfg); err != nil {
		return fmt.Errorf("create netns: %w", err)
	}
	if err := ensurePKI(cfg.PKIDir()); err != nil {
		return err
	}
	if err := writeKubeconfig(cfg); err != nil {
		return err
	}
	for _, c := range components {
		pid, err := startInNetns(cfg, c.name, c.argv(cfg), nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "started %-24s pid %d (%.1fs)\n", c.name, pid, time.Since(start).Seconds())
		if err := waitComponent(ctx, cfg, c.name); err != nil {
			return fmt.Errorf("%w (log: %s/%s.log)", err, cfg.LogDir(), c.name)
		}
	}
	fmt.Fprintf(out, "API server ready after %.1fs\n", time.Since(start).Seconds())
	if err := installCRDs(ctx, cfg); err != nil {
		return err
	}
	if err := waitNodeReady(ctx, cfg); err != nil {
		return err
	}
	fmt.Fprintf(out, "cluster up in %.1fs: `haptic-cluster kubectl get pods -A`\n", time.Since(start).Seconds())
	return nil
}

const etcdHealthURL = "http://127.0.0.1:2379/health"

// waitComponent blocks until a just-started component is usable.
func waitComponent(ctx context.Context, cfg Config, name string) error {
	switch name {
	case "etcd":
		return pollHTTP(ctx, cfg, nil, etcdHealthURL, 30*time.Second)
	case "kube-apiserver":
		return waitAPIServer(ctx, cfg, 60*time.Second)
	default:
		return nil
	}
}

// waitAPIServer polls /readyz with the admin credential, from inside the namespace.
func waitAPIServer(ctx context.Context, cfg Config, timeout time.Duration) error {
	restConfig, err := RESTConfig(cfg)
	if err != nil {
		return err
	}
	return pollHTTP(ctx, cfg, restConfig, APIServerURL()+"/readyz", timeout)
}

// installCRDs applies the Gateway API experimental CRDs server-side (they are
// too large for client-side apply's annotation) and waits until established.
func installCRDs(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if out, err := Kubectl(ctx, cfg, "apply", "--server-side", "--force-conflicts", "-f", cfg.CRDDir()); err != nil {
		return fmt.Errorf("apply gateway-api CRDs: %w: %s", err, out)
	}
	if out, err := Kubectl(ctx, cfg, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"); err != nil {
		return fmt.Errorf("wait for CRDs: %w: %s", err, out)
	}
	return nil
}

// Kubectl runs the cached kubectl with the admin kubeconfig inside the namespace.
func Kubectl(ctx context.Context, cfg Config, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ip", kubectlArgv(cfg, args...)...)
	return cmd.CombinedOutput()
}

// kubectlArgv is the `ip` argument list that runs kubectl inside the namespace.
func kubectlArgv(cfg Config, args ...string) []string {
	return append([]string{"netns", "exec", cfg.Netns, cfg.Binary("kubectl"), "--kubeconfig=" + cfg.Kubeconfig()}, args...)
}

// waitNodeReady waits until the process node has registered a Ready Node.
func waitNodeReady(ctx context.Context, cfg Config) error {
	cs, _, err := Clientset(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 0; time.Now().Before(deadline); attempt++ {
		node, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return nil
				}
			}
		}
		if rec, ok := readPIDFile(cfg, "node"); !ok || !rec.alive() {
			return fmt.Errorf("process node exited (log: %s/node.log)", cfg.LogDir())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("node %s not Ready after 30s (log: %s/node.log)", NodeName, cfg.LogDir())
}

// Healthy returns nil when every component runs and the API server is ready.
func Healthy(ctx context.Context, cfg Config) error {
	if !netns.Exists(cfg.Netns) {
		return fmt.Errorf("netns %s does not exist", cfg.Netns)
	}
	for _, c := range components {
		rec, ok := readPIDFile(cfg, c.name)
		if !ok || !rec.alive() {
			return fmt.Errorf("%s is not running", c.name)
		}
	}
	return waitAPIServer(ctx, cfg, 2*time.Second)
}

// clearStale stops recorded processes, ends anything left in the namespace,
// deletes the namespace, detaches stale mounts and drops per-run state.
func clearStale(cfg Config) error {
	for i := len(components) - 1; i >= 0; i-- {
		rec, ok := readPIDFile(cfg, components[i].name)
		if !ok {
			continue
		}
		if err := stopProcess(rec, 10*time.Second); err != nil {
			return fmt.Errorf("stop %s: %w", components[i].name, err)
		}
		if err := os.Remove(pidFile(cfg, components[i].name)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove pid file: %w", err)
		}
	}
	if err := killNetnsProcesses(cfg.Netns, 5*time.Second); err != nil {
		return err
	}
	// Pod processes live in per-pod namespaces: find them by their marker.
	if err := node.KillClusterProcesses(cfg.Netns); err != nil {
		return err
	}
	if err := deletePodNetns(cfg); err != nil {
		return err
	}
	if err := deleteNetns(cfg.Netns); err != nil {
		return err
	}
	if err := unmountStale(cfg); err != nil {
		return err
	}
	for _, dir := range []string{cfg.EtcdDir(), cfg.PodsDir(), cfg.RunDir()} {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove %s: %w", dir, err)
		}
	}
	return nil
}

// Down stops every process Up started and removes the namespace.
func Down(cfg Config, out io.Writer) error {
	lock, err := Lock(cfg, "up.lock", false)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if err := clearStale(cfg); err != nil {
		return err
	}
	fmt.Fprintf(out, "cluster down (netns %s removed)\n", cfg.Netns)
	return nil
}

// RestartStaleNode restarts the process node when the haptic-cluster binary it
// runs was replaced (a rebuilt node during development): the new node ends
// the old one's containers and starts the pods again.
func RestartStaleNode(ctx context.Context, cfg Config, out io.Writer) error {
	lock, err := Lock(cfg, "up.lock", false)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	rec, ok := readPIDFile(cfg, "node")
	if !ok || !rec.alive() {
		return fmt.Errorf("process node is not running")
	}
	if !NodeStale(cfg) {
		return nil
	}
	fmt.Fprintf(out, "restarting the process node: its binary was rebuilt, or it runs another checkout's bin/\n")
	if err := stopProcess(rec, 30*time.Second); err != nil {
		return fmt.Errorf("stop stale node: %w", err)
	}
	if _, err := startInNetns(cfg, "node", nodeArgs(cfg), nil); err != nil {
		return err
	}
	return waitNodeReady(ctx, cfg)
}

// repairable reports the dead components when the cluster's data (namespace,
// etcd) still lives: restarting only them keeps the cluster's objects. A stopped
// API server (StopAPIServer), controller, scheduler or node is replaced; anything
// worse means a fresh cluster.
func repairable(ctx context.Context, cfg Config) ([]component, bool) {
	if !netns.Exists(cfg.Netns) {
		return nil, false
	}
	var dead []component
	apiserverAlive := false
	for _, c := range components {
		rec, ok := readPIDFile(cfg, c.name)
		alive := ok && rec.alive()
		if c.name == "etcd" && !alive {
			return nil, false
		}
		if c.name == "kube-apiserver" {
			apiserverAlive = alive
		}
		if !alive {
			dead = append(dead, c)
		}
	}
	// A process SIGKILLed a moment ago can still be exiting: only an etcd that
	// answers holds data worth keeping.
	if pollHTTP(ctx, cfg, nil, etcdHealthURL, 2*time.Second) != nil {
		return nil, false
	}
	if apiserverAlive && waitAPIServer(ctx, cfg, 2*time.Second) != nil {
		return nil, false
	}
	return dead, len(dead) > 0
}

func repair(ctx context.Context, cfg Config, dead []component, out io.Writer) error {
	for _, c := range dead {
		pid, err := startInNetns(cfg, c.name, c.argv(cfg), nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "restarted %-24s pid %d (it had died)\n", c.name, pid)
		if err := waitComponent(ctx, cfg, c.name); err != nil {
			return fmt.Errorf("%w (log: %s/%s.log)", err, cfg.LogDir(), c.name)
		}
	}
	if err := waitNodeReady(ctx, cfg); err != nil {
		return err
	}
	fmt.Fprintln(out, "cluster repaired")
	return nil
}

// NodeStale reports whether the running process node's executable was
// replaced (rebuilt) since it started, or it runs the binaries of another
// checkout's bin/ (its containers would run that checkout's haptic).
func NodeStale(cfg Config) bool {
	rec, ok := readPIDFile(cfg, "node")
	if !ok || !rec.alive() {
		return false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", rec.PID))
	if err == nil && strings.HasSuffix(exe, " (deleted)") {
		return true
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", rec.PID))
	return err == nil && otherBinDir(cmdline, cfg.BinDir)
}

// otherBinDir reports whether a node's command line (NUL-separated) names a
// --bin-dir other than binDir.
func otherBinDir(cmdline []byte, binDir string) bool {
	for arg := range strings.SplitSeq(string(cmdline), "\x00") {
		if dir, ok := strings.CutPrefix(arg, "--bin-dir="); ok {
			return filepath.Clean(dir) != filepath.Clean(binDir)
		}
	}
	return false
}
