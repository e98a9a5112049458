package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// Status writes what runs: the namespace, each component, API readiness, and the
// pods (through kubectl) when the API server answers. It returns an error when
// the cluster is not fully up.
func Status(ctx context.Context, cfg Config, out io.Writer) error {
	var problems []string
	if netns.Exists(cfg.Netns) {
		fmt.Fprintf(out, "netns %-26s present\n", cfg.Netns)
	} else {
		fmt.Fprintf(out, "netns %-26s absent\n", cfg.Netns)
		problems = append(problems, "netns absent")
	}
	for _, c := range components {
		rec, ok := readPIDFile(cfg, c.name)
		switch {
		case !ok:
			fmt.Fprintf(out, "%-32s not started\n", c.name)
			problems = append(problems, c.name+" not started")
		case rec.alive():
			fmt.Fprintf(out, "%-32s running  pid %d\n", c.name, rec.PID)
		default:
			fmt.Fprintf(out, "%-32s DEAD     pid %d (log %s)\n", c.name, rec.PID, filepath.Join(cfg.LogDir(), c.name+".log"))
			problems = append(problems, c.name+" dead")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("cluster not up: %s", strings.Join(problems, ", "))
	}
	if err := waitAPIServer(ctx, cfg, 2*time.Second); err != nil {
		return fmt.Errorf("API server not ready: %w", err)
	}
	fmt.Fprintf(out, "API server %s ready; kubeconfig %s\n\n", APIServerURL(), cfg.Kubeconfig())
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pods, err := Kubectl(ctx, cfg, "get", "pods", "-A", "-o", "wide")
	if err != nil {
		return fmt.Errorf("list pods: %w: %s", err, pods)
	}
	_, err = out.Write(pods)
	return err
}

// PodLogs writes the log of one container of namespace/pod (every container when
// container is empty), as the process node stores them.
func PodLogs(cfg Config, namespacedPod, container string, out io.Writer) error {
	ns, name, ok := strings.Cut(namespacedPod, "/")
	if !ok {
		ns, name = "default", namespacedPod
	}
	dir := filepath.Join(cfg.PodsDir(), ns+"_"+name)
	pattern := filepath.Join(dir, "*.log")
	if container != "" {
		pattern = filepath.Join(dir, container+".log")
	}
	files, err := filepath.Glob(pattern)
	if err != nil {
		return fmt.Errorf("find logs: %w", err)
	}
	if len(files) == 0 {
		return fmt.Errorf("no logs for %s/%s (looked for %s)", ns, name, pattern)
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		if len(files) > 1 {
			fmt.Fprintf(out, "==> %s <==\n", filepath.Base(f))
		}
		if _, err := out.Write(data); err != nil {
			return fmt.Errorf("write logs: %w", err)
		}
	}
	return nil
}

// KubectlArgv returns the command line (program and arguments) that runs
// kubectl with the admin kubeconfig inside the namespace.
func KubectlArgv(cfg Config, args ...string) []string {
	return append([]string{"ip"}, kubectlArgv(cfg, args...)...)
}

// ExecArgv returns the command line that runs argv inside the namespace.
func ExecArgv(cfg Config, argv ...string) []string {
	return append([]string{"ip", "netns", "exec", cfg.Netns}, argv...)
}
