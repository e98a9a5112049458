package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/haproxy-haptic/haptic/localcluster/cluster"
	"github.com/haproxy-haptic/haptic/localcluster/node"
)

const usage = `usage: haptic-cluster up|down [--force]|status|kubectl ARGS|exec CMD|forward LOCALPORT IP:PORT|logs NS/POD [CONTAINER]|pod-exec NS/POD[/CONTAINER] CMD|apiserver-stop [--kill]|apiserver-start`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if os.Args[1] == "container-init" {
		// Runs as a container's first process: must not touch anything else.
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: haptic-cluster container-init SPECFILE")
			os.Exit(2)
		}
		err := node.RunContainerInit(os.Args[2])
		fmt.Fprintf(os.Stderr, "container-init: %v\n", err)
		os.Exit(127)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "haptic-cluster %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func run(ctx context.Context, command string, args []string) error {
	cfg, err := cluster.DefaultConfig()
	if err != nil {
		return err
	}
	switch command {
	case "up":
		if err := cluster.Up(ctx, cfg, os.Stdout); err != nil {
			return err
		}
		// A person asked for the cluster: tests must not take it down afterwards.
		if err := os.Remove(cfg.TestsStartedMarker()); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("claim the cluster: %w", err)
		}
		return nil
	case "down":
		return down(cfg, args)
	case "status":
		return cluster.Status(ctx, cfg, os.Stdout)
	case "kubectl":
		return execve(cluster.KubectlArgv(cfg, args...))
	case "exec":
		if len(args) == 0 {
			return fmt.Errorf("usage: haptic-cluster exec CMD [ARGS...]")
		}
		return execve(cluster.ExecArgv(cfg, args...))
	case "pod-exec":
		return podExec(args)
	case "forward":
		return forward(ctx, cfg, args)
	case "logs":
		if len(args) < 1 || len(args) > 2 {
			return fmt.Errorf("usage: haptic-cluster logs NAMESPACE/POD [CONTAINER]")
		}
		container := ""
		if len(args) == 2 {
			container = args[1]
		}
		return cluster.PodLogs(cfg, args[0], container, os.Stdout)
	case "apiserver-stop":
		// --kill: SIGKILL at once (a crash); else a graceful stop of up to 10 s.
		grace := 10 * time.Second
		if len(args) == 1 && args[0] == "--kill" {
			grace = 0
		} else if len(args) > 0 {
			return fmt.Errorf("usage: haptic-cluster apiserver-stop [--kill]")
		}
		return cluster.StopAPIServer(cfg, grace)
	case "apiserver-start":
		return cluster.StartAPIServer(ctx, cfg)
	case "node":
		return runNode(ctx, cfg, args)
	case "help", "-h", "--help":
		fmt.Println(usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", command, usage)
}
