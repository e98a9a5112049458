package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/haproxy-haptic/haptic/localcluster/cluster"
	"github.com/haproxy-haptic/haptic/localcluster/netns"
	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// execve replaces this process with argv (looked up on PATH).
func execve(argv []string) error {
	program, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("find %s: %w", argv[0], err)
	}
	if err := syscall.Exec(program, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", program, err)
	}
	return nil
}

// forward relays 127.0.0.1:LOCALPORT (root namespace) to IP:PORT inside the cluster.
func forward(ctx context.Context, cfg cluster.Config, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: haptic-cluster forward LOCALPORT TARGETIP:PORT")
	}
	port, err := strconv.Atoi(args[0])
	if err != nil || port <= 0 || port > 65535 {
		return fmt.Errorf("bad local port %q", args[0])
	}
	if _, _, err := net.SplitHostPort(args[1]); err != nil {
		return fmt.Errorf("bad target %q: %w", args[1], err)
	}
	listen := net.JoinHostPort("127.0.0.1", args[0])
	fmt.Printf("forwarding %s -> %s inside netns %s (Ctrl-C to stop)\n", listen, args[1], cfg.Netns)
	return netns.Forward(ctx, listen, cfg.Netns, args[1], log.Printf)
}

// runNode runs the process node; `up` starts it inside the namespace.
func runNode(ctx context.Context, cfg cluster.Config, args []string) error {
	flags := flag.NewFlagSet("node", flag.ContinueOnError)
	kubeconfig := flags.String("kubeconfig", cfg.Kubeconfig(), "admin kubeconfig")
	podsDir := flags.String("pods-dir", cfg.PodsDir(), "per-pod state and logs")
	cacheDir := flags.String("cache-dir", cfg.CacheDir, "binary cache (echo-basic, coredns)")
	binDir := flags.String("bin-dir", cfg.BinDir, "repository bin/ (haptic, haptic-agent)")
	netnsName := flags.String("netns", cfg.Netns, "the cluster's network namespace")
	images := flags.String("images", os.Getenv("HAPTIC_NODE_IMAGES"),
		"comma-separated image table files (image name → command, args, env); default $HAPTIC_NODE_IMAGES")
	imagesDir := flags.String("images-dir", cfg.ImagesDir(), "directory of image table files read at every container start")
	if err := flags.Parse(args); err != nil {
		return fmt.Errorf("parse node flags: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	client, err := clientFromKubeconfig(*kubeconfig)
	if err != nil {
		return err
	}
	n := node.New(node.Config{
		NodeName: cluster.NodeName,
		Netns:    *netnsName,
		HostIP:   cluster.APIServerIP,
		PodsDir:  *podsDir,
		Dirs:     node.Dirs{Cache: *cacheDir, Bin: *binDir, ImageTables: splitList(*images), ImageTableDir: *imagesDir},
		Self:     self,
	}, client)
	return n.Run(ctx)
}

// down stops the cluster unless test processes are using it (they hold the
// users lock shared; see clustertest), which --force overrides.
func down(cfg cluster.Config, args []string) error {
	force := len(args) == 1 && args[0] == "--force"
	if len(args) > 0 && !force {
		return fmt.Errorf("usage: haptic-cluster down [--force]")
	}
	if !force {
		lock, free, err := cluster.TryLock(cfg, "users.lock")
		if err != nil {
			return err
		}
		if !free {
			return fmt.Errorf("test processes are using the cluster; wait for them or use `down --force`")
		}
		defer lock.Unlock()
	}
	return cluster.Down(cfg, os.Stdout)
}

// podExec runs a command in a pod container's mount and network namespaces,
// with the container's environment, via nsenter (kubectl exec needs a
// streaming kubelet API the process node does not serve).
func podExec(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: haptic-cluster pod-exec NAMESPACE/POD[/CONTAINER] CMD [ARGS...]")
	}
	parts := strings.Split(args[0], "/")
	if len(parts) < 2 || len(parts) > 3 {
		return fmt.Errorf("want NAMESPACE/POD or NAMESPACE/POD/CONTAINER, got %q", args[0])
	}
	pids, err := node.PodProcesses(parts[0] + "/" + parts[1])
	if err != nil {
		return err
	}
	pid, err := pickContainer(pids, parts)
	if err != nil {
		return err
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return fmt.Errorf("read environment of %d: %w", pid, err)
	}
	program, err := exec.LookPath("nsenter")
	if err != nil {
		return fmt.Errorf("find nsenter: %w", err)
	}
	argv := append([]string{"nsenter", "--target", strconv.Itoa(pid), "--mount", "--net", "--"}, args[1:]...)
	if err := syscall.Exec(program, argv, strings.Split(strings.TrimRight(string(env), "\x00"), "\x00")); err != nil {
		return fmt.Errorf("exec nsenter: %w", err)
	}
	return nil
}

// pickContainer chooses the process of the named container (by its
// HAPTIC_CONTAINER marker), or the only one when no container is named.
func pickContainer(pids []int, parts []string) (int, error) {
	if len(parts) == 2 {
		if len(pids) != 1 {
			return 0, fmt.Errorf("pod %s/%s has %d container processes; name the container", parts[0], parts[1], len(pids))
		}
		return pids[0], nil
	}
	want := []byte("\x00HAPTIC_CONTAINER=" + parts[2] + "\x00")
	for _, pid := range pids {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(append([]byte{0}, env...), want) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no running container %q in pod %s/%s", parts[2], parts[0], parts[1])
}

// splitList splits a comma-separated list, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
