package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// reload asks the master to reload (through the master CLI) and verifies it within
// the reload verification timeout: the master's reload counter moved, its failed
// counter did not, a new current worker exists and it answers `show info` on the
// admin socket. It returns the master's reload counter (the reload ID). Callers
// hold a.mu.
func (a *Agent) reload(ctx context.Context) (int, error) {
	start := time.Now()
	id, err := a.reloadAndVerify(ctx)
	a.st.recordReload(start, err)
	return id, err
}

func (a *Agent) reloadAndVerify(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, a.opts.ReloadVerificationTimeout)
	defer cancel()
	if a.proc == nil || a.proc.exited() {
		return 0, fmt.Errorf("reload: haproxy is not running")
	}
	before, err := a.pollProc(ctx)
	if err != nil {
		return 0, fmt.Errorf("reload: read process list before: %w", err)
	}
	oldWorker, _ := before.Current()
	// The master refuses connections while it re-parses; retry the connect.
	cli := *a.master
	cli.RetryFor = time.Until(deadline(ctx))
	if _, err := cli.Do(ctx, "reload"); err != nil {
		return 0, fmt.Errorf("reload: %w", err)
	}
	for {
		pl, err := a.showProc(ctx)
		if err == nil && pl.Master.Reloads > before.Master.Reloads {
			a.st.setProcs(pl)
			if pl.Failed > before.Failed {
				return pl.Master.Reloads, fmt.Errorf("reload %d failed: HAProxy did not load the configuration (failed reloads %d -> %d)",
					pl.Master.Reloads, before.Failed, pl.Failed)
			}
			if w, ok := pl.Current(); ok && w.PID != oldWorker.PID {
				info, err := a.showInfo(ctx)
				if err == nil && info.PID == w.PID {
					return pl.Master.Reloads, nil
				}
			}
		}
		if a.proc.exited() {
			return 0, fmt.Errorf("reload: haproxy master exited: %v", a.proc.err)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("reload not verified within %s: no new worker serving", a.opts.ReloadVerificationTimeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pollProc reads `show proc`, retrying while the master is busy.
func (a *Agent) pollProc(ctx context.Context) (runtime.ProcList, error) {
	for {
		pl, err := a.showProc(ctx)
		if err == nil {
			return pl, nil
		}
		select {
		case <-ctx.Done():
			return pl, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func deadline(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(MaxReloadVerificationTimeout)
}
