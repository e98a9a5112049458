package clustertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/haproxy-haptic/haptic/localcluster/cluster"
	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// Cluster is a running local cluster.
type Cluster struct {
	Config cluster.Config
	REST   *rest.Config
	Client kubernetes.Interface
}

var (
	once      sync.Once
	shared    *Cluster
	startErr  error
	usersLock *cluster.FileLock // held shared while this process uses the cluster
)

// Start returns the running cluster, bringing it up first if needed. It fails
// the test with instructions when the prerequisites are missing.
func Start(t testing.TB) *Cluster {
	t.Helper()
	once.Do(func() { shared, startErr = start() })
	if startErr != nil {
		t.Fatalf("local cluster: %v", startErr)
	}
	return shared
}

func start() (*Cluster, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("the local cluster needs root (network namespaces, mounts); run the tests as root")
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	cfg, err := cluster.DefaultConfig()
	if err != nil {
		return nil, err
	}
	cfg.BinDir = filepath.Join(root, "bin")
	if err := cfg.CheckBinaries(); err != nil {
		return nil, err
	}
	if err := buildTool(root, cfg.BinDir); err != nil {
		return nil, err
	}
	// Test binaries of several packages may run at once: each holds the users
	// lock shared; the teardown in Main needs it exclusively.
	usersLock, err = cluster.Lock(cfg, "users.lock", true)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := ensureUp(ctx, cfg); err != nil {
		return nil, err
	}
	if cluster.NodeStale(cfg) {
		if err := restartStaleNode(ctx, cfg); err != nil {
			return nil, err
		}
	}
	client, restConfig, err := cluster.Clientset(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Config: cfg, REST: restConfig, Client: client}, nil
}

// Main runs the tests, then takes the cluster down if test processes started
// it and no other test process still uses it (HAPTIC_CLUSTER_KEEP=1 keeps it).
func Main(m *testing.M) int {
	code := m.Run()
	if shared == nil {
		return code
	}
	usersLock.Unlock()
	if os.Getenv("HAPTIC_CLUSTER_KEEP") == "1" {
		return code
	}
	if _, err := os.Stat(shared.Config.TestsStartedMarker()); err != nil {
		return code // started by a person: leave it running
	}
	last, ok, err := cluster.TryLock(shared.Config, "users.lock")
	if err != nil || !ok {
		return code // another test process still uses it and will take it down
	}
	defer last.Unlock()
	if err := cluster.Down(shared.Config, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "cluster down: %v\n", err)
		return 1
	}
	return code
}

// HTTPClient returns a client whose connections start inside the cluster's namespace.
func (c *Cluster) HTTPClient(timeout time.Duration) *http.Client {
	return netns.HTTPClient(c.Config.Netns, nil, timeout)
}

// Listen opens a TCP listener inside the cluster's namespace: what the API server
// calls (an admission webhook on 127.0.0.1) can be served by the test process.
func (c *Cluster) Listen(address string) (net.Listener, error) {
	return netns.Listen(c.Config.Netns, "tcp", address)
}

// Command returns a command that runs argv inside the cluster's namespace.
func (c *Cluster) Command(ctx context.Context, argv ...string) *exec.Cmd {
	full := cluster.ExecArgv(c.Config, argv...)
	return exec.CommandContext(ctx, full[0], full[1:]...)
}

// Kubectl runs kubectl against the cluster (inside its namespace).
func (c *Cluster) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	return cluster.Kubectl(ctx, c.Config, args...)
}

// repoRoot walks up from the working directory to the product's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/haproxy-haptic/haptic\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("repository root (go.mod of github.com/haproxy-haptic/haptic) not found")
		}
		dir = parent
	}
}

// buildTool builds bin/haptic-cluster from the working tree, so the node and
// container-init that run the test's pods are the code under test.
func buildTool(root, binDir string) error {
	gobin := os.Getenv("GO")
	if gobin == "" {
		gobin = "go"
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", binDir, err)
	}
	// Build beside the target and rename: a running node keeps its old
	// executable, and concurrent test processes never see a half-written file.
	tmp := filepath.Join(binDir, fmt.Sprintf(".haptic-cluster.%d", os.Getpid()))
	args := []string{"build", "-o", tmp}
	if os.Getenv("HAPTIC_CLUSTER_RACE") == "1" {
		args = append(args, "-race") // the node itself under the race detector
	}
	cmd := exec.Command(gobin, append(args, "./localcluster/cmd/haptic-cluster")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build haptic-cluster: %w: %s", err, out)
	}
	target := filepath.Join(binDir, "haptic-cluster")
	if sameContent(tmp, target) {
		// Keep the file a running node executes: replacing it would mark the node stale.
		return os.Remove(tmp)
	}
	if err := os.Rename(tmp, target); err != nil {
		return fmt.Errorf("install haptic-cluster: %w", err)
	}
	return nil
}

func sameContent(a, b string) bool {
	sum := func(path string) ([32]byte, bool) {
		data, err := os.ReadFile(path)
		return sha256.Sum256(data), err == nil
	}
	sa, okA := sum(a)
	sb, okB := sum(b)
	return okA && okB && sa == sb
}

// ensureUp brings the cluster up unless it is healthy.
func ensureUp(ctx context.Context, cfg cluster.Config) error {
	if cluster.Healthy(ctx, cfg) == nil {
		return nil
	}
	var out bytes.Buffer
	if err := cluster.Up(ctx, cfg, &out); err != nil {
		return fmt.Errorf("cluster up: %w\n%s", err, out.String())
	}
	// The last test process using this cluster takes it down (see Main).
	if err := os.WriteFile(cfg.TestsStartedMarker(), nil, 0o644); err != nil {
		return fmt.Errorf("mark cluster as started by tests: %w", err)
	}
	return nil
}

// restartStaleNode restarts a node that runs an older build of haptic-cluster
// (the code under test changed) — but only when no other test process uses
// the cluster, since a node restart restarts every pod.
func restartStaleNode(ctx context.Context, cfg cluster.Config) error {
	usersLock.Unlock()
	exclusive, alone, err := cluster.TryLock(cfg, "users.lock")
	if err != nil {
		return err
	}
	if alone {
		err = cluster.RestartStaleNode(ctx, cfg, io.Discard)
		exclusive.Unlock()
	} else {
		fmt.Fprintln(os.Stderr, "clustertest: the process node runs an older build of haptic-cluster; "+
			"other test processes use the cluster, so it is not restarted")
	}
	if err != nil {
		return err
	}
	if usersLock, err = cluster.Lock(cfg, "users.lock", true); err != nil {
		return err
	}
	// Another process may have taken the cluster down while we held no lock.
	return ensureUp(ctx, cfg)
}
