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
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if cluster.Healthy(ctx, cfg) != nil {
		// Up needs bin/haptic-cluster for the node; clustertest (in the child)
		// rebuilds it from the working tree and restarts a stale node.
		if err := goBuild(root, filepath.Join(cfg.BinDir, "haptic-cluster"), "./localcluster/cmd/haptic-cluster"); err != nil {
			fmt.Fprintln(os.Stderr, "build haptic-cluster:", err)
			return 1
		}
		if err := cluster.Up(ctx, cfg, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "cluster up:", err)
			return 1
		}
		// As clustertest does: the last test process out takes down a cluster
		// that tests started.
		if err := os.WriteFile(cfg.TestsStartedMarker(), nil, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
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
