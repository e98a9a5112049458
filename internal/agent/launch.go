package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The launch file is how HAProxy's own container (Options.External) learns how to
// start HAProxy: the agent writes it once agent.cfg and a config file are on the
// shared state volume, and `haptic-agent launch` waits for it and runs
// `haproxy -W -S <master socket> -p <pid file> -f <config> -f <agent.cfg>`
// (again, re-reading the file, each time the master exits). The
// arguments come from the agent alone, so the two containers cannot disagree on
// paths.

// launchSpec is the launch file's content.
type launchSpec struct {
	// Args are HAProxy's arguments (without the binary).
	Args []string `json:"args"`
}

func launchFile(stateDir string) string { return filepath.Join(stateDir, "launch.json") }

// writeLaunchFile records HAProxy's arguments for the launcher. Called after
// agent.cfg and the config file were written.
func (o *Options) writeLaunchFile() error {
	return writeJSON(o.launchFile(), launchSpec{Args: haproxyArgs(o)})
}

// LaunchArgs waits (polling every poll) until an agent on stateDir wrote its
// launch file and returns HAProxy's arguments. A master socket left by a master
// that died with its container is removed, so the new master binds afresh.
func LaunchArgs(ctx context.Context, stateDir string, poll time.Duration) ([]string, error) {
	var spec launchSpec
	for {
		err := readJSON(launchFile(stateDir), &spec)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the agent's launch file in %s: %w", stateDir, ctx.Err())
		case <-time.After(poll):
		}
	}
	if len(spec.Args) == 0 {
		return nil, fmt.Errorf("launch file in %s has no arguments", stateDir)
	}
	if err := os.Remove((&Options{StateDir: stateDir}).masterSocket()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale master socket: %w", err)
	}
	return spec.Args, nil
}
