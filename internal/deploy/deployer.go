package deploy

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/plan"
)

// Pod is one HAProxy pod to deliver to.
type Pod struct {
	Name string
	IP   string
}

// Outcome is the result of one apply to one pod.
type Outcome struct {
	Pod      string
	Hash     string
	Reloaded bool
	// Mode is ModeRuntime (operations, no reload) or ModeReload.
	Mode string
	// Reasons say why a reload was needed (empty for runtime applies).
	Reasons []plan.Reason
	// FastPathFailed: runtime operations failed and the agent reloaded instead;
	// FastPathError is what the agent said.
	FastPathFailed bool
	FastPathError  string
	Duration       time.Duration
	Err            error

	// ServerDivergence and MapDivergence: servers and maps the agent's read-back
	// after the runtime operations found running differently from the files (it
	// then reloaded).
	ServerDivergence, MapDivergence int
	// Ops is the number of runtime operations sent (runtime applies only).
	Ops int
	// PlannedAhead: the runtime apply's plan was made before its bundle was
	// desired (Prepare, from the admission of the change).
	PlannedAhead bool
}

// Apply modes.
const (
	ModeRuntime = "runtime"
	ModeReload  = "reload"
)

// Options configure a Deployer.
type Options struct {
	Port               int
	Username, Password string
	SyncTimeout        time.Duration
	MinInterval        time.Duration
	// ReloadVerificationTimeout is sent with every apply: a reload the agent
	// cannot verify within it is rolled back (0: the agent's own default).
	ReloadVerificationTimeout time.Duration
	Log                       *slog.Logger
	// HTTP is the client agents are reached with (nil: a default client). Tests
	// that run the controller outside the cluster's network pass one that dials
	// from inside it.
	HTTP *http.Client
	// OnOutcome sees every apply (metrics, status). It must not block.
	OnOutcome func(Outcome)
}

// Deployer keeps every pod at the desired bundle.
type Deployer struct {
	opts    Options
	mu      sync.Mutex
	desired *bundle.Bundle
	workers map[string]*worker
	ctx     context.Context
	plans   planMemo
	// preparing: a Prepare is planning (under mu).
	preparing bool
}

// New returns a deployer; it works until ctx ends.
func New(ctx context.Context, opts Options) *Deployer {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Deployer{opts: opts, workers: map[string]*worker{}, ctx: ctx}
}

// SetDesired makes b the bundle every pod should run; the latest call wins.
func (d *Deployer) SetDesired(b *bundle.Bundle) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.desired = b
	for _, w := range d.workers {
		w.wake()
	}
}

// Desired returns the bundle pods should run, or nil.
func (d *Deployer) Desired() *bundle.Bundle {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.desired
}

// SetPods replaces the pod set: new pods get the desired bundle at once, gone pods'
// workers stop.
func (d *Deployer) SetPods(pods []Pod) {
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range pods {
		seen[p.Name] = true
		if w, ok := d.workers[p.Name]; ok && w.pod.IP == p.IP {
			continue
		} else if ok {
			w.stop()
		}
		w := d.newWorker(p)
		d.workers[p.Name] = w
		go w.run()
		w.wake()
	}
	for name, w := range d.workers {
		if !seen[name] {
			w.stop()
			delete(d.workers, name)
		}
	}
}

// Pods lists the pods being served, sorted by name.
func (d *Deployer) Pods() []Pod {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Pod, 0, len(d.workers))
	for _, w := range d.workers {
		out = append(out, w.pod)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Deployed reports the hash each pod last accepted.
func (d *Deployer) Deployed() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]string{}
	for name, w := range d.workers {
		out[name] = w.deployedHash()
	}
	return out
}

// Client returns an agent client for a pod.
func (d *Deployer) Client(p Pod) *agentapi.Client {
	return &agentapi.Client{
		BaseURL:  "http://" + net.JoinHostPort(p.IP, strconv.Itoa(d.opts.Port)),
		Username: d.opts.Username, Password: d.opts.Password, HTTP: d.opts.HTTP,
	}
}

// worker delivers to one pod.
type worker struct {
	d      *Deployer
	pod    Pod
	client *agentapi.Client
	signal chan struct{}
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	deployed   string        // the desired hash the pod serves
	running    *plan.Running // what the pod runs, when this worker put it there
	caps       *plan.Capabilities
	lastReload time.Time
	// adopt: the worker has not learned yet what the pod runs; before its first
	// delivery it reads the pod's running set (see adoptRunning).
	adopt bool
	// delivered: the worker has delivered a set to the pod (see accepted).
	delivered bool
	// noEdits: the pod's agent refused file edits (an older agent); changed
	// files go whole.
	noEdits bool
	// ran are the hashes of the last sets the pod accepted (a ring; next counts
	// them all): a drift check's read of the pod may land between any of those
	// accepted while it reads.
	ran  [8]string
	next int
}

// record adds running to the sets the pod ran. Callers hold w.mu.
func (w *worker) record(running *plan.Running) {
	w.ran[w.next%len(w.ran)] = running.Bundle.Hash
	w.next++
}

func (w *worker) sendEdits() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.noEdits
}

func (d *Deployer) newWorker(p Pod) *worker {
	ctx, cancel := context.WithCancel(d.ctx)
	return &worker{d: d, pod: p, client: d.Client(p), signal: make(chan struct{}, 1), ctx: ctx, cancel: cancel, adopt: true}
}

func (w *worker) wake() {
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *worker) stop() { w.cancel() }

func (w *worker) deployedHash() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deployed
}

// workerOf is pod's worker, nil when the deployer has none.
func (d *Deployer) workerOf(pod string) *worker {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.workers[pod]
}

// runningHash is the hash of the files the pod should have on disk (RunningHashes).
func (w *worker) runningHash() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running != nil {
		return w.running.Bundle.Hash
	}
	return w.deployed
}

// accepts returns how many sets the pod has accepted from this worker: a mark for
// ranSince.
func (w *worker) accepts() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next
}

// ranSince reports whether hash is a set the pod accepted after mark (accepts),
// among the last len(w.ran).
func (w *worker) ranSince(mark int, hash string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := max(mark, w.next-len(w.ran)); i < w.next; i++ {
		if w.ran[i%len(w.ran)] == hash {
			return true
		}
	}
	return false
}

// RunningHashes reports, per pod, the hash of the files the pod should have on
// disk: the desired bundle after a reload, or what runtime operations made of it
// (new backends under pool names). Drift is a pod whose tree differs from this.
func (d *Deployer) RunningHashes() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]string{}
	for name, w := range d.workers {
		out[name] = w.runningHash()
	}
	return out
}

// Forget makes the next wake re-apply even if the pod reported the same hash before
// (drift correction).
func (d *Deployer) Forget(pod string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w, ok := d.workers[pod]; ok {
		w.mu.Lock()
		w.deployed, w.running, w.adopt = "", nil, false // a whole-set apply, not a plan from what runs
		w.mu.Unlock()
		w.wake()
	}
}

func (w *worker) run() {
	backoff := time.Second
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.signal:
		}
		for {
			b := w.d.Desired()
			if b == nil || b.Hash == w.deployedHash() {
				break
			}
			w.adoptRunning()
			// Only plan decides runtime-vs-reload. Runtime operations are not paced.
			planned, ahead, ok := w.plan(b)
			var res plan.Result
			if ok {
				res = planned.res
			}
			if ok && !res.Reload {
				out := w.applyRuntime(b, planned)
				out.PlannedAhead = ahead
				if w.d.opts.OnOutcome != nil {
					w.d.opts.OnOutcome(out)
				}
				if out.Err == nil {
					continue
				}
				// The agent refused the operations (e.g. it runs another set): reload.
				w.mu.Lock()
				w.running = nil
				w.mu.Unlock()
			}
			// Pace reloads: a change inside the window waits for its end, and the
			// bundle applied then is whatever is desired then.
			w.mu.Lock()
			wait := time.Until(w.lastReload.Add(w.d.opts.MinInterval))
			w.mu.Unlock()
			if wait > 0 && !sleep(w.ctx, wait) {
				return
			}
			planFor := b.Hash
			b = w.d.Desired()
			out := w.apply(b)
			if ok && b.Hash == planFor {
				out.Reasons = res.Reasons
			}
			if w.d.opts.OnOutcome != nil {
				w.d.opts.OnOutcome(out)
			}
			if out.Err != nil {
				w.d.opts.Log.Warn("apply failed", "pod", w.pod.Name, "error", out.Err, "retryIn", backoff)
				if !sleep(w.ctx, backoff) {
					return
				}
				backoff = min(backoff*2, 30*time.Second)
				continue
			}
			backoff = time.Second
		}
	}
}

// plan compares what the pod runs with b; ok is false when the worker does not know
// what runs (first apply, after a failure) or the pod's capabilities. ahead: the
// plan was made before b was desired (Prepare).
func (w *worker) plan(b *bundle.Bundle) (planned *memoEntry, ahead, ok bool) {
	w.mu.Lock()
	running, caps := w.running, w.caps
	w.mu.Unlock()
	if running == nil {
		return nil, false, false
	}
	if caps == nil {
		ctx, cancel := context.WithTimeout(w.ctx, 10*time.Second)
		st, err := w.client.State(ctx)
		cancel()
		if err != nil {
			return nil, false, false
		}
		c, err := plan.CapabilitiesFor(st.HAProxyVersion)
		if err != nil {
			return nil, false, false
		}
		w.mu.Lock()
		w.caps = &c
		w.mu.Unlock()
		caps = &c
	}
	planned, ahead = w.d.plans.get(*running, b, *caps)
	return planned, ahead, true
}

// Prepare plans b, in the background, against what each idle pod runs: the
// admission webhook renders a change before the API server stores it, and the
// delivery of the bundle the stored change renders to (the same one, when
// templates read nothing the API server adds) then finds its plan made. A pod
// that is being delivered to, or whose running set is unknown, is left alone:
// its next delivery would plan from another set. One Prepare works at a time; a
// burst of admissions does not pile up plans.
func (d *Deployer) Prepare(b *bundle.Bundle) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.desired == nil || d.desired.Hash == b.Hash || d.preparing {
		return
	}
	type from struct {
		running *plan.Running
		caps    plan.Capabilities
	}
	var froms []from
	for _, w := range d.workers {
		w.mu.Lock()
		running, caps, idle := w.running, w.caps, w.deployed == d.desired.Hash
		w.mu.Unlock()
		if running != nil && caps != nil && idle &&
			!slices.ContainsFunc(froms, func(f from) bool { return f.running == running }) { // pods that run the same set
			froms = append(froms, from{running, *caps})
		}
	}
	if len(froms) == 0 {
		return
	}
	d.preparing = true
	// The plans are reserved before the admission answers, so that the delivery
	// of the stored change, however soon it comes, waits for them.
	computes := make([]func(), len(froms))
	for i, f := range froms {
		computes[i] = d.plans.prepare(*f.running, b, f.caps)
	}
	go func() {
		for _, compute := range computes {
			compute()
		}
		d.mu.Lock()
		d.preparing = false
		d.mu.Unlock()
	}()
}

// adoptRunning reads, once, what a pod the worker has no record of runs (a new
// leader, a restarted controller, a pod that existed before this deployer) and
// records it as running, so that the first delivery is planned like any other:
// a controller restart costs no reload when the change is runtime-applicable. If
// the agent cannot say, the worker applies the whole set as before and tries
// again before the next delivery.
func (w *worker) adoptRunning() {
	w.mu.Lock()
	need := w.adopt && w.running == nil
	w.mu.Unlock()
	if !need {
		return
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.d.opts.SyncTimeout)
	defer cancel()
	r, err := w.client.Running(ctx)
	if err != nil {
		w.d.opts.Log.Debug("could not read what the pod runs; applying the whole set", "pod", w.pod.Name, "error", err)
		return
	}
	caps, err := plan.CapabilitiesFor(r.HAProxyVersion)
	if err != nil {
		w.d.opts.Log.Debug("unknown HAProxy version; applying the whole set", "pod", w.pod.Name, "error", err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running, w.caps, w.adopt = &plan.Running{Bundle: r.Bundle, Aliases: r.Aliases}, &caps, false
}

func (w *worker) applyRuntime(b *bundle.Bundle, planned *memoEntry) Outcome {
	res := planned.res
	w.mu.Lock()
	base := w.running
	w.mu.Unlock()
	if len(res.Ops) == 0 && res.Running.Bundle.Hash == base.Bundle.Hash {
		// The pod already runs it (e.g. adopted by a new leader): nothing to send.
		w.accepted(b.Hash, res.Running, false)
		return Outcome{Pod: w.pod.Name, Hash: b.Hash, Mode: ModeRuntime}
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.d.opts.SyncTimeout)
	defer cancel()
	start := time.Now()
	next := res.Running
	req := agentapi.RuntimeRequest{BaseHash: base.Bundle.Hash, Operations: res.Ops, Files: res.Files,
		Hash: next.Bundle.Hash, Aliases: next.Aliases, ReloadVerificationTimeoutMs: w.d.opts.ReloadVerificationTimeout.Milliseconds()}
	if w.sendEdits() {
		req.Files, req.Edits = planned.whole, planned.edits
	}
	resp, err := w.client.Runtime(ctx, req)
	if len(req.Edits) > 0 && refusesField(err, "edits") {
		// An agent older than file edits: send the files whole from now on.
		w.mu.Lock()
		w.noEdits = true
		w.mu.Unlock()
		req.Files, req.Edits = res.Files, nil
		resp, err = w.client.Runtime(ctx, req)
	}
	if refusesNewOps(err) {
		// An agent older than add-server options or CA file updates: the change goes
		// as a reload.
		cancel()
		return w.apply(b)
	}
	out := Outcome{Pod: w.pod.Name, Hash: b.Hash, Mode: ModeRuntime, Duration: time.Since(start), Reloaded: resp.Reloaded,
		FastPathFailed: resp.Reloaded, FastPathError: resp.Error, ServerDivergence: resp.ServerDivergence, MapDivergence: resp.MapDivergence,
		Ops: len(res.Ops)}
	if err != nil {
		out.Err = fmt.Errorf("pod %s: runtime apply: %w", w.pod.Name, err)
		return out
	}
	// After a fallback reload the agent runs the same resulting files, so next
	// (aliases included) still describes the pod.
	w.accepted(b.Hash, next, resp.Reloaded)
	return out
}

func (w *worker) apply(b *bundle.Bundle) Outcome {
	ctx, cancel := context.WithTimeout(w.ctx, w.d.opts.SyncTimeout)
	defer cancel()
	start := time.Now()
	resp, err := w.client.ApplyRequest(ctx, agentapi.ConfigRequest{Hash: b.Hash, Files: b.Files,
		ReloadVerificationTimeoutMs: w.d.opts.ReloadVerificationTimeout.Milliseconds()})
	out := Outcome{Pod: w.pod.Name, Hash: b.Hash, Mode: ModeReload, Duration: time.Since(start), Reloaded: resp.Reloaded}
	if err != nil {
		out.Err = fmt.Errorf("pod %s: %w", w.pod.Name, err)
		w.mu.Lock()
		w.running = nil // unknown after a failed apply
		w.mu.Unlock()
		return out
	}
	w.accepted(b.Hash, &plan.Running{Bundle: b}, resp.Reloaded)
	return out
}

// accepted records that the pod serves the desired hash and runs running.
func (w *worker) accepted(desired string, running *plan.Running, reloaded bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deployed, w.running, w.adopt = desired, running, false
	w.record(running)
	// The pacing window starts with a reload of a set this worker delivered: the
	// first delivery to a pod replaces what the pod booted with or what another
	// leader left, so the change right after a Gateway's initial deploy (its first
	// route, say) is not held for minDeploymentInterval.
	if reloaded && w.delivered {
		w.lastReload = time.Now()
	}
	w.delivered = true
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
