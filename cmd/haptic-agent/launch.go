package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agent"
)

// launch is `haptic-agent launch`, the entrypoint of HAProxy's own container: it
// waits until the agent (in the pod's other container, on the same state dir)
// wrote its launch file, then execs HAProxy in master-worker mode with the
// arguments the agent chose. HAProxy's master becomes the container's main
// process: it dies with the container, and the container's restartPolicy starts
// it again; reloads are the agent's, through the master socket. It returns only
// on error (exit code 1; 2 for usage errors).
func launch(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("haptic-agent launch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", "/var/lib/haptic-agent", "the agent's state dir (shared with the agent's container)")
	binary := fs.String("haproxy-binary", "haproxy", "HAProxy binary")
	poll := fs.Duration("poll", 100*time.Millisecond, "how often the launch file is looked for")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || *poll <= 0 {
		fmt.Fprintf(stderr, "haptic-agent launch: unexpected arguments %v or poll %s\n", fs.Args(), *poll)
		return 2
	}
	haproxyArgs, err := agent.LaunchArgs(ctx, *stateDir, *poll)
	if err != nil {
		fmt.Fprintf(stderr, "haptic-agent launch: %v\n", err)
		return 1
	}
	path, err := exec.LookPath(*binary)
	if err != nil {
		fmt.Fprintf(stderr, "haptic-agent launch: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "haptic-agent launch: exec %s %v\n", path, haproxyArgs)
	err = syscall.Exec(path, append([]string{*binary}, haproxyArgs...), os.Environ())
	fmt.Fprintf(stderr, "haptic-agent launch: exec %s: %v\n", path, err)
	return 1
}
