package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// adopt takes over the HAProxy master of this state dir that some other process
// started — an earlier agent process, or HAProxy's own container
// (Options.External) — when it serves: its pid file names a live master of our
// master socket, the master answers `show proc` with a current worker, and that
// worker answers `show info` on the admin socket. The set it runs is the one on
// disk (the manifest, which the caller loaded); the read-back that follows checks
// it.
// false: nothing to adopt (no master, or one that does not serve), with why.
// Callers hold a.mu.
func (a *Agent) adopt(ctx context.Context) (bool, string, error) {
	o := &a.opts
	pid, ok, err := runningMaster(o)
	if err != nil || !ok {
		return false, "no haproxy master runs", err
	}
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	pl, err := a.showProc(qctx)
	if err != nil {
		return false, fmt.Sprintf("haproxy master %d runs but its master socket does not answer: %v", pid, err), nil
	}
	w, ok := pl.Current()
	if !ok {
		return false, fmt.Sprintf("haproxy master %d runs without a current worker", pid), nil
	}
	info, err := a.showInfo(qctx)
	if err != nil || info.PID != w.PID {
		return false, fmt.Sprintf("haproxy master %d's current worker does not answer on the admin socket: %v", pid, err), nil
	}
	p := watchProcess(pid)
	a.proc = p
	a.running.Store(p)
	a.st.setVersion(mustVersion(info.Version, a.st.version()))
	a.st.setProcs(pl)
	o.Logger.Info("adopted the running haproxy master", "pid", pid, "worker", w.PID, "reloads", pl.Master.Reloads, "hash", a.current.Hash)
	return true, "", nil
}

// awaitMaster waits until HAProxy's container (Options.External) runs a master
// that serves and adopts it. A set that does not come up within the reload
// verification timeout is replaced on disk by the last known good set, then by
// the bootstrap config, for the container's next start (it exits when HAProxy
// cannot load its config, and the launcher starts it again); on the last
// fallback it waits until ctx ends. Callers hold a.mu.
func (a *Agent) awaitMaster(ctx context.Context) error {
	fallbacks := []*bundle.Bundle{a.lkg, a.bootstrap()}
	deadline := time.Now().Add(a.opts.ReloadVerificationTimeout)
	logged, fellBack := time.Time{}, false
	for {
		ok, why, err := a.adopt(ctx)
		if err != nil {
			return err
		}
		if ok {
			if fellBack {
				a.lkg, a.lkgAliases = a.current, a.aliases
			}
			return nil
		}
		if time.Since(logged) > 10*time.Second {
			a.opts.Logger.Info("waiting for haproxy's container to start haproxy", "reason", why, "hash", a.current.Hash)
			logged = time.Now()
		}
		if time.Now().After(deadline) && len(fallbacks) > 0 {
			fb := fallbacks[0]
			fallbacks = fallbacks[1:]
			if fb.Hash != a.current.Hash {
				aliases := a.lkgAliases
				if fb != a.lkg {
					aliases = nil
				}
				a.opts.Logger.Warn("haproxy did not serve; falling back for its next start", "reason", why, "hash", fb.Hash)
				if err := a.installSet(fb, aliases); err != nil {
					return err
				}
				fellBack = true
			}
			deadline = time.Now().Add(a.opts.ReloadVerificationTimeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no haproxy master serves (%s): %w", why, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readBackAdopted compares what the adopted HAProxy runs with the set on disk (maps and
// servers, as the runtime verification does) and corrects a divergence: an agent
// killed between a runtime operation and writing its files leaves disk behind the
// worker. Callers hold a.mu.
func (a *Agent) readBackAdopted(ctx context.Context) {
	rec := agentapi.VerifyRecord{At: time.Now().UTC()}
	start := time.Now()
	if err := a.verify(ctx, &rec); err != nil {
		rec.Error = fmt.Sprintf("read-back after adoption: %v", err)
	}
	rec.DurationMs = time.Since(start).Milliseconds()
	a.st.recordVerify(rec)
	a.opts.Logger.Info("read back the adopted haproxy", "mapDivergence", rec.MapDivergence,
		"serverDivergence", rec.ServerDivergence, "corrected", rec.Corrected, "error", rec.Error)
}
