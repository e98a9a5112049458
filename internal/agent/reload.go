package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// reload asks the master to reload (through the master CLI) and verifies it within
// timeout (0: the agent's ReloadVerificationTimeout): the master's reload counter
// moved, its failed counter did not, a new current worker exists and it answers
// `show info` on the admin socket. It returns the master's reload counter (the
// reload ID). Callers hold a.mu.
func (a *Agent) reload(ctx context.Context, timeout time.Duration) (int, error) {
	if timeout <= 0 {
		timeout = a.opts.ReloadVerificationTimeout
	}
	if err := a.writeUnwritten(); err != nil {
		return 0, fmt.Errorf("reload: %w", err)
	}
	start := time.Now()
	id, err := a.reloadAndVerify(ctx, timeout)
	a.st.recordReload(start, err)
	return id, err
}

// requestTimeout turns a request's reloadVerificationTimeoutMs into a duration
// (0: the agent's default); above the ceiling or negative is an error.
func requestTimeout(ms int64) (time.Duration, error) {
	d := time.Duration(ms) * time.Millisecond
	if ms < 0 || d > MaxReloadVerificationTimeout {
		return 0, fmt.Errorf("reloadVerificationTimeoutMs %d is outside 0..%d", ms, MaxReloadVerificationTimeout.Milliseconds())
	}
	return d, nil
}

func (a *Agent) reloadAndVerify(ctx context.Context, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if a.proc == nil || a.proc.exited() {
		return 0, fmt.Errorf("reload: haproxy is not running")
	}
	before, err := a.pollProc(ctx)
	if err != nil && ctx.Err() != nil {
		return 0, fmt.Errorf("reload not verified within %s: read process list before: %w", timeout, err)
	} else if err != nil {
		return 0, fmt.Errorf("reload: read process list before: %w", err)
	}
	oldWorker, _ := before.Current()
	// The master refuses connections while it re-parses; retry the connect.
	cli := *a.master
	cli.RetryFor = time.Until(deadline(ctx))
	if _, err := cli.Do(ctx, "reload"); err != nil && ctx.Err() != nil {
		return 0, fmt.Errorf("reload not verified within %s: %w", timeout, err)
	} else if err != nil {
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
			return 0, fmt.Errorf("reload not verified within %s: no new worker serving", timeout)
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
