package deploy

import (
	"context"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
)

// Divergence is what a check of a pod found running differently from what it was
// given (the agent has corrected it by then): Deployments is 1 when servers (or the
// whole tree) diverged — it counts deployments, not servers — and Maps the number of
// map files that diverged.
type Divergence struct {
	Deployments int
	Maps        int
}

// Divergence is what the agent's read-back after a runtime apply found.
func (o Outcome) Divergence() Divergence {
	var d Divergence
	if o.ServerDivergence > 0 {
		d.Deployments = 1
	}
	d.Maps = o.MapDivergence
	return d
}

// stateDivergence is what the runtime verification of GET /v1/state?verify=runtime
// found (nothing when no verification ran).
func stateDivergence(s agentapi.State) Divergence {
	var d Divergence
	if s.LastVerify == nil {
		return d
	}
	if s.LastVerify.ServerDivergence > 0 {
		d.Deployments = 1
	}
	d.Maps = s.LastVerify.MapDivergence
	return d
}

// DriftCheck is the result of asking one pod for its state.
type DriftCheck struct {
	Pod string
	// Verify is what the agent's runtime verification found (and corrected).
	Verify Divergence
	// Drifted: the files on the pod's disk are not what it was given (it is re-applied).
	Drifted bool
	// Hash and TreeHash are what the agent reported, Want what it should run.
	Hash, TreeHash, Want string
}

// driftTimeout bounds one pod's state request.
const driftTimeout = 10 * time.Second

// WatchDrift asks each pod, every interval, for the hash of the files on its disk;
// a pod whose tree no longer matches what it was given is re-applied (Forget). Each
// ask also runs the agent's runtime map verification. Every answer is reported. It
// returns when ctx ends; every <= 0 disables it.
func (d *Deployer) WatchDrift(ctx context.Context, every time.Duration, report func(DriftCheck)) {
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d.CheckDrift(ctx, report)
	}
}

// CheckDrift runs one round of WatchDrift.
func (d *Deployer) CheckDrift(ctx context.Context, report func(DriftCheck)) {
	if d.Desired() == nil {
		return
	}
	for _, p := range d.Pods() {
		w := d.workerOf(p.Name)
		if w == nil {
			continue
		}
		mark := w.accepts()
		want := w.runningHash()
		if want == "" {
			continue // nothing accepted yet: the worker is applying
		}
		sctx, cancel := context.WithTimeout(ctx, driftTimeout)
		// The agent also compares its map files with the running worker and
		// corrects them (runtime verification) before it answers.
		st, err := d.Client(p).VerifyState(sctx)
		cancel()
		if err != nil {
			continue
		}
		// Runtime applies may have landed during the read: the pod is off only if
		// it matches neither what was expected before nor a set it accepted since
		// (one it ran before that, an agent restarted on older files, is off).
		drifted := st.TreeHash != st.Hash || (st.Hash != want && !w.ranSince(mark, st.Hash))
		if drifted {
			d.Forget(p.Name)
		}
		if report != nil {
			report(DriftCheck{Pod: p.Name, Verify: stateDivergence(st), Drifted: drifted, Hash: st.Hash, TreeHash: st.TreeHash, Want: want})
		}
	}
}
