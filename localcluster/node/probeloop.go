package node

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// notReadyRetry is how often a readiness probe is retried while the container
// has never been ready: a failure then changes nothing, and a fast first
// success makes a new pod Ready within a fraction of a second.
const notReadyRetry = 250 * time.Millisecond

// probeLoop runs the startup, readiness and liveness probes of one container
// run and updates its Started/Ready flags. A failed startup or liveness probe
// signals unhealthy, after which the runner restarts the container.
func (r *containerRunner) probeLoop(ctx context.Context, t probeTarget, unhealthy chan<- struct{}) {
	if r.isInit {
		return
	}
	spec := &r.spec
	if spec.StartupProbe != nil {
		if !r.untilThreshold(ctx, spec.StartupProbe, t, true) {
			if ctx.Err() == nil {
				unhealthy <- struct{}{}
			}
			return
		}
	}
	r.update(func(v *containerView) { v.Started = true })
	if spec.LivenessProbe != nil {
		go func() {
			if !r.untilThreshold(ctx, spec.LivenessProbe, t, false) && ctx.Err() == nil {
				unhealthy <- struct{}{}
			}
		}()
	}
	if spec.ReadinessProbe == nil {
		r.update(func(v *containerView) { v.Ready = true })
		return
	}
	r.readinessLoop(ctx, spec.ReadinessProbe, t)
}

// untilThreshold probes until a decision: with untilSuccess (startup probes) it
// returns true after successThreshold successes; otherwise (liveness) it
// probes forever and returns false after failureThreshold consecutive
// failures. Either returns false when the context ends.
func (r *containerRunner) untilThreshold(ctx context.Context, p *corev1.Probe, t probeTarget, untilSuccess bool) bool {
	initial, period, successes, failures := probeSettings(p)
	if !sleepCtx(ctx, initial) {
		return false
	}
	var ok, bad int32
	for {
		if err := runProbe(ctx, p, t); err == nil {
			ok, bad = ok+1, 0
			if untilSuccess && ok >= successes {
				return true
			}
		} else {
			ok, bad = 0, bad+1
			if bad >= failures {
				return false
			}
		}
		if !sleepCtx(ctx, period) {
			return false
		}
	}
}

func (r *containerRunner) readinessLoop(ctx context.Context, p *corev1.Probe, t probeTarget) {
	initial, period, successes, failures := probeSettings(p)
	if !sleepCtx(ctx, initial) {
		return
	}
	ready, everReady := false, false
	var ok, bad int32
	for {
		if err := runProbe(ctx, p, t); err == nil {
			ok, bad = ok+1, 0
			if !ready && ok >= successes {
				ready, everReady = true, true
				r.update(func(v *containerView) { v.Ready = true })
			}
		} else {
			ok, bad = 0, bad+1
			if ready && bad >= failures {
				ready = false
				r.update(func(v *containerView) { v.Ready = false })
				r.event(corev1.EventTypeWarning, "Unhealthy", "readiness probe failed: %v", err)
			}
		}
		wait := period
		if !everReady {
			wait = min(period, notReadyRetry)
		}
		if !sleepCtx(ctx, wait) {
			return
		}
	}
}
