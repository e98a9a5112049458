package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agent"
)

// Restart back-off of the HAProxy master: immediate at first, doubling while
// it keeps failing; a master that ran backoffReset resets it.
const (
	launchBackoffMax   = 10 * time.Second
	launchBackoffReset = time.Minute
)

// launch is `haptic-agent launch`, the entrypoint of HAProxy's own container: it
// waits until the agent (in the pod's other container, on the same state dir)
// wrote its launch file and runs HAProxy in master-worker mode with the arguments
// the agent chose. When the master exits on its own (killed, crashed, a config it
// cannot load) the dead master's workers are told to finish (SIGUSR1) and a new
// master starts at once on what is on disk — without a container restart and its
// back-off — and the agent adopts it. Reloads are the agent's, through the master
// socket. A stop signal (SIGTERM, SIGINT, SIGUSR1: the image's) soft-stops
// HAProxy (SIGUSR1 to the master: connections finish, hard-stop-after bounds it)
// and returns 0 once it exited; 1 on errors, 2 for usage errors.
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
	path, err := exec.LookPath(*binary)
	if err != nil {
		fmt.Fprintf(stderr, "haptic-agent launch: %v\n", err)
		return 1
	}
	backoff := time.Duration(0)
	for {
		haproxyArgs, err := agent.LaunchArgs(ctx, *stateDir, *poll)
		if ctx.Err() != nil {
			return 0
		} else if err != nil {
			fmt.Fprintf(stderr, "haptic-agent launch: %v\n", err)
			return 1
		}
		started := time.Now()
		exit, stopped := runMaster(ctx, path, haproxyArgs, stderr)
		if stopped {
			return 0
		}
		if time.Since(started) > launchBackoffReset {
			backoff = 0
		}
		fmt.Fprintf(stderr, "haptic-agent launch: haproxy master exited (%v); starting it again in %s\n", exit, backoff)
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(backoff):
		}
		backoff = min(max(2*backoff, 250*time.Millisecond), launchBackoffMax)
	}
}

// runMaster runs one HAProxy master (in a process group of its own, with its
// workers) until it exits — then its leftover workers get SIGUSR1, so they finish
// their connections and leave the listeners to the next master — or until ctx
// ends: then it is soft-stopped and stopped is true.
func runMaster(ctx context.Context, path string, args []string, stderr io.Writer) (exit error, stopped bool) {
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err, false
	}
	pid := cmd.Process.Pid
	fmt.Fprintf(stderr, "haptic-agent launch: haproxy master %d: %s %v\n", pid, path, args)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		_ = syscall.Kill(-pid, syscall.SIGUSR1)
		return err, false
	case <-ctx.Done():
		_ = syscall.Kill(pid, syscall.SIGUSR1)
		<-done // the container's grace period bounds the wait
		return nil, true
	}
}
