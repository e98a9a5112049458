package controller

import (
	"context"
	"sync"
	"time"

	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/metrics"
)

// The runtime path first, status after. A change is rendered and handed to the
// fleets' deployers; until every pod of those fleets has answered for it, route and
// Gateway status passes, HAProxyCfg writes and the HAProxyTemplateConfig's status wait
// (at most holdMax), so that their API calls and CPU do not compete with delivery.
// Status writes never trigger delivery: they come back as watch updates the watch
// stage drops.
//
// deliveries also carries each change's trace: when its first watch event arrived,
// for haptic_change_stage_seconds.

// holdMax bounds how long status and HAProxyCfg writes wait for a delivery (a pod
// that does not answer, a reload paced by minDeploymentInterval).
const holdMax = 3 * time.Second

// maxAwaitingStatus bounds the changes remembered for the next status pass.
const maxAwaitingStatus = 1024

// deliveries is shared by the controller's iterations and its status writer.
type deliveries struct {
	m *metrics.Metrics // nil: no trace

	mu         sync.Mutex
	rendering  int                          // reconciles in progress
	pending    map[*fleet]*handOff          // bundles not yet answered by every pod
	running    map[*fleet]map[string]string // fleet → pod → the hash it last applied
	changed    time.Time                    // first watch event of the changes no reconcile took yet
	notified   bool                         // a notification waits for the reconciler
	applied    []time.Time                  // changes live on their pods whose status is not written yet
	idle       chan struct{}                // closed while nothing is rendering or pending
	statusFrom []time.Time                  // the changes the running status pass covers
}

// handOff is one fleet's latest bundle and the pods that have not answered for it.
type handOff struct {
	hash    string
	pods    map[string]bool
	changed time.Time // the earliest change it carries (zero: not traced)
}

func newDeliveries(m *metrics.Metrics) *deliveries {
	idle := make(chan struct{})
	close(idle)
	return &deliveries{m: m, pending: map[*fleet]*handOff{}, running: map[*fleet]map[string]string{}, idle: idle}
}

// changeSeen records an admitted watch event (the first since the last reconcile
// starts the trace).
func (d *deliveries) changeSeen(now time.Time) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.changed.IsZero() {
		d.changed = now
	}
}

// reconcileStarted marks delivery busy and returns when the changes it covers
// began (zero: none traced).
func (d *deliveries) reconcileStarted() time.Time {
	if d == nil {
		return time.Time{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rendering++
	d.notified = false
	d.busy()
	t := d.changed
	d.changed = time.Time{}
	return t
}

// notify records a notification on its way to the reconciler.
func (d *deliveries) notify() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.notified = true
}

// reconcilerIdle reports whether nothing renders and no notification waits: a new
// change may then fire at once (watch.Debouncer.Idle).
func (d *deliveries) reconcilerIdle() bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rendering == 0 && !d.notified
}

// reconcileDone ends what reconcileStarted began.
func (d *deliveries) reconcileDone() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rendering--
	d.settle()
}

// stage observes how long after changed a stage ended.
func (d *deliveries) stage(stage string, changed, now time.Time) {
	if d == nil || d.m == nil || changed.IsZero() {
		return
	}
	d.m.ChangeStage.WithLabelValues(stage).Observe(now.Sub(changed).Seconds())
}

// handed records a bundle given to f's deployer for pods; a newer one replaces the
// older, keeping the earlier change time (the older bundle may never be applied).
func (d *deliveries) handed(f *fleet, hash string, pods []deploy.Pod, changed time.Time) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if old := d.pending[f]; old != nil && !old.changed.IsZero() && (changed.IsZero() || old.changed.Before(changed)) {
		changed = old.changed
	}
	if len(pods) == 0 {
		delete(d.pending, f)
		d.settle()
		return
	}
	h := &handOff{hash: hash, pods: make(map[string]bool, len(pods)), changed: changed}
	for _, p := range pods {
		// A pod that runs it already is not sent it again: no answer will come.
		if d.running[f][p.Name] != hash {
			h.pods[p.Name] = true
		}
	}
	if len(h.pods) == 0 {
		delete(d.pending, f)
		d.settle()
		return
	}
	d.pending[f] = h
	d.busy()
}

// outcome records a pod's answer: an apply of the fleet's latest bundle, or a
// failure (which ends the wait as well).
func (d *deliveries) outcome(f *fleet, o deploy.Outcome, now time.Time) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if o.Err == nil {
		if d.running[f] == nil {
			d.running[f] = map[string]string{}
		}
		d.running[f][o.Pod] = o.Hash
	}
	h := d.pending[f]
	if h == nil || !h.pods[o.Pod] || (o.Err == nil && o.Hash != h.hash) {
		return
	}
	delete(h.pods, o.Pod)
	if o.Err == nil {
		d.stage(metrics.StagePlanned, h.changed, now.Add(-o.Duration))
		d.stage(metrics.StageApplied, h.changed, now)
	}
	if len(h.pods) == 0 {
		delete(d.pending, f)
		if !h.changed.IsZero() {
			if len(d.applied) >= maxAwaitingStatus {
				d.applied = d.applied[1:] // no status pass runs (no status writer)
			}
			d.applied = append(d.applied, h.changed)
		}
		d.settle()
	}
}

// podsChanged drops pods that left f from the wait.
func (d *deliveries) podsChanged(f *fleet, pods []deploy.Pod) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	keep := make(map[string]bool, len(pods))
	for _, p := range pods {
		keep[p.Name] = true
	}
	for name := range d.running[f] {
		if !keep[name] {
			delete(d.running[f], name)
		}
	}
	h := d.pending[f]
	if h == nil {
		return
	}
	for name := range h.pods {
		if !keep[name] {
			delete(h.pods, name)
		}
	}
	if len(h.pods) == 0 {
		delete(d.pending, f)
		d.settle()
	}
}

// forget drops a stopped fleet.
func (d *deliveries) forget(f *fleet) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.pending, f)
	delete(d.running, f)
	d.settle()
}

// wait blocks until nothing is rendering or being delivered, holdMax passed or ctx
// ended.
func (d *deliveries) wait(ctx context.Context) {
	if d == nil {
		return
	}
	d.mu.Lock()
	idle := d.idle
	d.mu.Unlock()
	t := time.NewTimer(holdMax)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
}

// beforeStatusPass waits for delivery and takes the changes the pass will cover.
func (d *deliveries) beforeStatusPass(ctx context.Context) {
	if d == nil {
		return
	}
	d.wait(ctx)
	d.mu.Lock()
	d.statusFrom, d.applied = d.applied, nil
	d.mu.Unlock()
}

// afterStatusPass observes status_written for the changes the pass covered.
func (d *deliveries) afterStatusPass() {
	if d == nil {
		return
	}
	d.mu.Lock()
	from := d.statusFrom
	d.statusFrom = nil
	d.mu.Unlock()
	now := time.Now()
	for _, t := range from {
		d.stage(metrics.StageStatusWritten, t, now)
	}
}

// busy and settle keep idle in step with rendering and pending (under mu).
func (d *deliveries) busy() {
	select {
	case <-d.idle:
		d.idle = make(chan struct{})
	default:
	}
}

func (d *deliveries) settle() {
	if d.rendering > 0 || len(d.pending) > 0 {
		return
	}
	select {
	case <-d.idle:
	default:
		close(d.idle)
	}
}
