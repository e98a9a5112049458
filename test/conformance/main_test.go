//go:build conformance

package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"testing"

	"github.com/haproxy-haptic/haptic/localcluster/cluster"
	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

// inNetnsEnv marks the test process that runs inside the cluster's network
// namespace.
const inNetnsEnv = "HAPTIC_CONFORMANCE_IN_NETNS"

// TestMain runs the tests inside the cluster's network namespace.
//
// clustertest's clients dial from inside the namespace, and so does the suite's
// default HTTP round tripper (CustomDialContext, see conformance_test.go). But
// some of the suite's code paths dial with a plain net.Dialer (its h2c transport,
// the WebSocket test, the gRPC client): claiming one of those extended features
// would send traffic to 10.x from the root namespace. So the test binary brings
// the cluster up (which creates the namespace) and re-executes itself under
// `ip netns exec`: every socket the suite opens then starts inside the cluster.
// Keep the main thread for the main goroutine (locked in init, it stays so): the
// namespace dialer's goroutines enter the cluster's namespace on threads that
// then end, and the main thread must never be one of them — Down ends every
// process whose (main thread's) namespace is the cluster's.
func init() { runtime.LockOSThread() }

func TestMain(m *testing.M) {
	if os.Getenv(inNetnsEnv) != "1" {
		os.Exit(outside())
	}
	os.Exit(clustertest.Main(m))
}

// repoRoot is the product's repository root (the test runs in test/conformance).
func repoRoot() string {
	root, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return root
}

// outside builds what the pods run, brings the cluster up if needed and runs the
// test binary again inside the cluster's namespace. It returns the exit code.
func outside() int {
	root := repoRoot()
	// bin/haptic-agent: the process node runs it for the haproxy image. Built here,
	// in the root namespace, where the module proxy is reachable.
	if err := goBuild(root, filepath.Join(root, "bin", "haptic-agent"), "./cmd/haptic-agent"); err != nil {
		fmt.Fprintln(os.Stderr, "build haptic-agent:", err)
		return 1
	}
	cfg, err := cluster.DefaultConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.BinDir = filepath.Join(root, "bin")
	if err := cfg.CheckBinaries(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Hold the cluster's users lock (shared) until the child is done: the child
	// lives in the cluster's namespace, and another test process that takes the
	// cluster down ends every process in it. clustertest in the child sees the
	// lock held and leaves the teardown to us (below).
	users, err := cluster.Lock(cfg, "users.lock", true)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := ensureUp(root, &cfg, &users); err != nil {
		fmt.Fprintln(os.Stderr, err)
		users.Unlock()
		return 1
	}
	code := runInside(cfg)
	users.Unlock()
	if err := teardown(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "cluster down:", err)
		return 1
	}
	return code
}

// ensureUp brings the cluster up unless it is healthy and restarts a process
// node that runs an older haptic-cluster, when no other test process uses the
// cluster — what clustertest.Start does.
func ensureUp(root string, cfg *cluster.Config, users **cluster.FileLock) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	up := func() error {
		if cluster.Healthy(ctx, *cfg) == nil {
			return nil
		}
		// Up needs bin/haptic-cluster for the node.
		if err := goBuild(root, filepath.Join(cfg.BinDir, "haptic-cluster"), "./localcluster/cmd/haptic-cluster"); err != nil {
			return fmt.Errorf("build haptic-cluster: %w", err)
		}
		if err := cluster.Up(ctx, *cfg, os.Stderr); err != nil {
			return fmt.Errorf("cluster up: %w", err)
		}
		// The last test process out takes down a cluster that tests started.
		return os.WriteFile(cfg.TestsStartedMarker(), nil, 0o644)
	}
	if err := up(); err != nil {
		return err
	}
	if !cluster.NodeStale(*cfg) {
		return nil
	}
	(*users).Unlock()
	exclusive, alone, err := cluster.TryLock(*cfg, "users.lock")
	if err != nil {
		return err
	}
	if alone {
		err = cluster.RestartStaleNode(ctx, *cfg, os.Stderr)
		exclusive.Unlock()
	} else {
		fmt.Fprintln(os.Stderr, "conformance: the process node runs an older build of haptic-cluster; "+
			"other test processes use the cluster, so it is not restarted")
	}
	if err != nil {
		return err
	}
	if *users, err = cluster.Lock(*cfg, "users.lock", true); err != nil {
		return err
	}
	return up() // another process may have taken the cluster down meanwhile
}

// teardown takes the cluster down when tests started it and no other test
// process uses it (HAPTIC_CLUSTER_KEEP=1 keeps it), as clustertest.Main does.
func teardown(cfg cluster.Config) error {
	if os.Getenv("HAPTIC_CLUSTER_KEEP") == "1" {
		return nil
	}
	if _, err := os.Stat(cfg.TestsStartedMarker()); err != nil {
		return nil // started by a person: leave it running
	}
	last, ok, err := cluster.TryLock(cfg, "users.lock")
	if err != nil || !ok {
		return nil // another test process still uses it and will take it down
	}
	defer last.Unlock()
	return cluster.Down(cfg, os.Stderr)
}

// runInside runs this test binary again, with the same arguments, inside the
// cluster's namespace and returns its exit code.
func runInside(cfg cluster.Config) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	argv := cluster.ExecArgv(cfg, append([]string{self}, os.Args[1:]...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), inNetnsEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "start the tests inside the cluster's namespace:", err)
		return 1
	}
	// `go test -timeout` ends this process; pass signals on so the child (and the
	// controller and the suite's cleanup in it) stop too.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() < 0 {
			fmt.Fprintf(os.Stderr, "the tests inside the cluster's namespace were ended: %v\n", exit)
			return 1
		}
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func goBuild(root, out, pkg string) error {
	gobin := os.Getenv("GO")
	if gobin == "" {
		gobin = "go"
	}
	tmp := filepath.Join(filepath.Dir(out), fmt.Sprintf(".%s.%d", filepath.Base(out), os.Getpid()))
	cmd := exec.Command(gobin, "build", "-o", tmp, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%v\n%s", err, b)
	}
	return os.Rename(tmp, out) // a running process keeps the file it executes
}
