package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
)

// adopt takes over the HAProxy master an earlier agent process of this state dir
// started, when it still serves: its pid file names a live master of our master
// socket, the master answers `show proc` with a current worker, and that worker
// answers `show info` on the admin socket. The set it runs is the one on disk
// (the manifest, which the caller loaded and which must have existed before:
// without it nothing tells what the master runs); the read-back that follows
// checks it.
// false: nothing to adopt (no master, or one that does not answer: the caller
// stops it and starts HAProxy anew). Callers hold a.mu.
func (a *Agent) adopt(ctx context.Context) (bool, error) {
	o := &a.opts
	pid, ok, err := runningMaster(o)
	if err != nil || !ok {
		return false, err
	}
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	pl, err := a.showProc(qctx)
	if err != nil {
		o.Logger.Warn("haproxy master runs but its master socket does not answer; starting anew", "pid", pid, "error", err)
		return false, nil
	}
	w, ok := pl.Current()
	if !ok {
		o.Logger.Warn("haproxy master runs without a current worker; starting anew", "pid", pid)
		return false, nil
	}
	info, err := a.showInfo(qctx)
	if err != nil || info.PID != w.PID {
		o.Logger.Warn("haproxy's current worker does not answer on the admin socket; starting anew", "pid", pid, "error", err)
		return false, nil
	}
	p := watchProcess(pid)
	a.proc = p
	a.running.Store(p)
	a.st.setVersion(mustVersion(info.Version, a.st.version()))
	a.st.setProcs(pl)
	o.Logger.Info("adopted the running haproxy master", "pid", pid, "worker", w.PID, "reloads", pl.Master.Reloads, "hash", a.current.Hash)
	return true, nil
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
