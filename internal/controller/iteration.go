package controller

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/record"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/events"
	"github.com/haproxy-haptic/haptic/internal/fieldpath"
	"github.com/haproxy-haptic/haptic/internal/fleetscope"
	"github.com/haproxy-haptic/haptic/internal/metrics"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/provision"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/runtimelimits"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/status/writer"
	"github.com/haproxy-haptic/haptic/internal/store"
	"github.com/haproxy-haptic/haptic/internal/validate"
	"github.com/haproxy-haptic/haptic/internal/watch"
)

// deps are what the controller hands every iteration: clients, observers and the
// status writer. They are explicit so that an iteration never reaches back into the
// Controller.
type deps struct {
	kube       kubernetes.Interface
	dyn        dynamic.Interface
	meta       metadata.Interface
	namespace  string // the controller's: HAProxy pods, Gateway Deployments, HAProxyCfgs
	configName string
	haproxy    string // the haproxy binary for validation
	schemaDir  string
	agentHTTP  *http.Client
	log        *slog.Logger
	metrics    *metrics.Metrics
	bus        *events.Bus
	recorder   record.EventRecorder
	status     *writer.Manager // Gateway API and Ingress status (nil in some unit tests)
	config     *configStatus   // the HAProxyTemplateConfig's status (status.go)
	// storesInUse is called once the iteration reconciled from synced stores
	// (admission's standby can stop).
	storesInUse func()
	// deliveries holds status and HAProxyCfg writes while a change is delivered,
	// and traces each change (delivery.go). Nil in some unit tests.
	deliveries *deliveries
}

// iteration is the lifetime of one config: its compiled templates, watchers,
// reconciler, pod discovery and deployer.
type iteration struct {
	d          deps
	cfg        *v1alpha1.HAProxyTemplateConfig
	generation int64
	engine     *render.Engine
	live       *store.Live
	ignore     []fieldpath.Path
	checker    *validate.Checker
	good       goodRenders // per fleet: the last good snapshot, what was left out (leftout.go)
	creds      credentials
	fleets     fleetSet         // the pods that receive configs (fleets.go)
	scope      fleetscope.Scope // which fleets a change touches
	ready      atomic.Bool      // the stores synced and were reconciled once: admission may use them
	informers  atomic.Pointer[watch.Informers]
	stop       func()
}

// prepare compiles a config; an error leaves the running iteration alone.
func prepare(d deps, cfg *v1alpha1.HAProxyTemplateConfig, generation int64) (*iteration, error) {
	reg, err := pipeline.Registry(d.schemaDir)
	if err != nil {
		return nil, err
	}
	b, err := store.NewBuilder(&cfg.Spec, reg)
	if err != nil {
		return nil, err
	}
	b.Prepare = render.PrepareForms
	for _, w := range cfg.Spec.WatchedResources {
		if _, err := watch.GVR(w); err != nil {
			return nil, err
		}
	}
	eng, err := render.Compile(&cfg.Spec, render.Options{Types: b.Types()})
	if err != nil {
		return nil, fmt.Errorf("compile templates: %w", err)
	}
	it := &iteration{d: d, cfg: cfg, generation: generation, engine: eng, live: store.NewLive(b),
		checker: &validate.Checker{Binary: d.haproxy, Layout: render.LayoutOf(&cfg.Spec)}, scope: scopeOf(b)}
	for _, p := range cfg.Spec.WatchedResourcesIgnoreFields {
		path, err := fieldpath.Parse(p)
		if err != nil {
			return nil, fmt.Errorf("spec.watchedResourcesIgnoreFields: %w", err)
		}
		it.ignore = append(it.ignore, path)
	}
	it.fleets = fleetSet{
		perGateway:  cfg.Spec.Gateways.Provisioning == v1alpha1.GatewaysPerGateway,
		podSelector: cfg.Spec.PodSelector.MatchLabels,
		prov: &provision.Provisioner{Kube: d.kube, Namespace: d.namespace, PodSelector: cfg.Spec.PodSelector.MatchLabels,
			Template: cfg.Spec.Gateways.DeploymentName, Log: d.log},
		status:  d.status,
		log:     d.log,
		stopped: func(f *fleet) { it.forgetLeftOut(f); d.deliveries.forget(f) },
		retry:   func() { time.AfterFunc(gatewayRetry, it.gatewaysChanged) },
	}
	it.fleets.start = func(ctx context.Context, gw types.NamespacedName, sel map[string]string, infra provision.Infra) *fleet {
		return it.startFleet(ctx, gw, sel, infra, map[string]any{"gateway": gw.Namespace + "/" + gw.Name})
	}
	return it, nil
}

// gatewaysChanged asks this iteration to reconcile (and sync its Gateway fleets),
// but only once it has reconciled from synced stores: a reconcile before the watched
// resources synced would render a partial snapshot (a Gateway held, its
// GatewayClass not listed yet: a bundle without its listeners) whose deploy made
// the Gateway Programmed. The first reconcile after the sync reads every Gateway.
func (it *iteration) gatewaysChanged() {
	if it.ready.Load() {
		it.d.bus.Publish(resourceChanged{})
	}
}

// run is the iteration's own runner list: the watcher, the podSelector's fleet
// (pod discovery, deployer, drift) and the reconcile loop.
func (it *iteration) run(ctx context.Context) error {
	d := it.d
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	creds, err := readCredentials(ctx, d.kube, d.namespace, it.cfg.Spec.CredentialsSecretRef)
	if err != nil {
		return err
	}
	it.creds = creds
	if len(it.cfg.Spec.PodSelector.MatchLabels) == 0 {
		return fmt.Errorf("spec.podSelector.matchLabels is empty: no HAProxy pods to deliver to")
	}
	extra := map[string]any{}
	if it.fleets.perGateway {
		extra["gateway"] = noGateway
	}
	// The podSelector's fleet starts first, before any pod discovery reports: tell
	// the status writer whose addresses Gateways get (their own pods' with
	// per-Gateway provisioning, never the podSelector's).
	it.fleets.publishAddresses()
	def := it.startFleet(ctx, types.NamespacedName{}, it.cfg.Spec.PodSelector.MatchLabels, provision.Infra{}, extra)
	it.statusConfig()
	sub := d.bus.Subscribe("reconciler", 100, EventResourceChanged)
	defer sub.Unsubscribe()

	w := &watch.Watcher{
		Dynamic: d.dyn, Metadata: d.meta, Live: it.live, Log: d.log, Ignore: it.ignore,
		Notify: func(resource string) {
			if resource != "" {
				d.metrics.DebounceFired.WithLabelValues(resource).Inc()
			}
			d.deliveries.notify()
			d.bus.Publish(resourceChanged{resource: resource})
		},
		Idle:      d.deliveries.reconcilerIdle,
		OnEvent:   func(resource, kind string) { d.metrics.ResourceEvents.WithLabelValues(resource, kind).Inc() },
		OnChange:  func(string) { d.deliveries.changeSeen(time.Now()) },
		OnDropped: func(resource, reason string) { d.metrics.WatchEventsDropped.WithLabelValues(resource, reason).Inc() },
		// A resource the API server does not serve (older CRDs) is skipped, not
		// waited for; watchServed restarts the iteration once it is served.
		Served: watch.ServedBy(d.kube.Discovery(), true),
		OnUnserved: func(resource string, _ schema.GroupVersionResource) {
			d.metrics.WatchUnserved.WithLabelValues(resource).Set(1)
		},
	}
	d.metrics.WatchUnserved.Reset()
	set, src, err := it.informerSet(w)
	if err != nil {
		return err
	}
	// The informers' load ends with the first reconcile: it had every object.
	loadDone, loading := runtimelimits.Loading(), true
	defer loadDone()
	if err := set.Start(ctx); err != nil {
		return err
	}
	it.informers.Store(set)
	if src != nil {
		d.status.Use(ctx, src)
		defer d.status.Forget(src) // its informers stop with this iteration
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Add(3)
	go func() { defer wg.Done(); errs <- w.Run(ctx) }()
	go func() { defer wg.Done(); errs <- it.discoverPods(ctx, def) }()
	go func() { defer wg.Done(); errs <- it.watchServed(ctx, w.Unserved()) }()
	defer wg.Wait()

	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errs:
			if err != nil {
				// The other runners end with ctx: cancel before the deferred Wait.
				cancel()
				return err
			}
		case <-sub.Lost():
			// A change notification was dropped: the stores are still right, so a
			// full reconcile from them loses nothing.
			d.log.Warn("reconciler lost a critical event; reconciling from the stores")
			it.reconcile(ctx, true)
		case <-sub.C():
			drain(sub)
			it.reconcile(ctx, false)
			if loading {
				loading = false
				go loadDone() // (a collection)
			}
		}
	}
}

// informerSet is the one set of informers that feeds the stores (w), status and
// provisioning (the status writer's Gateways): a resource both need is watched once.
func (it *iteration) informerSet(w *watch.Watcher) (*watch.Informers, *writer.Source, error) {
	set := watch.NewInformers(it.d.dyn, it.d.meta)
	set.OnWatchError = func(resource string, _ error) { it.d.metrics.WatchRestarts.WithLabelValues(resource).Inc() }
	if err := w.Register(set); err != nil {
		return nil, nil, err
	}
	var src *writer.Source
	if it.d.status != nil {
		src = it.d.status.Register(set)
	}
	return set, src, nil
}

// drain consumes queued notifications: one reconcile covers them all.
func drain(sub *events.Subscription) {
	for {
		select {
		case <-sub.C():
		default:
			return
		}
	}
}

// reconcile renders the current snapshot for every fleet whose inputs changed since
// its last render (every fleet when forced), validates each bundle and hands it to
// the fleet's deployer.
func (it *iteration) reconcile(ctx context.Context, force bool) {
	d := it.d
	changed := d.deliveries.reconcileStarted()
	defer d.deliveries.reconcileDone()
	snap := it.live.Snapshot()
	it.ready.Store(true)
	if d.storesInUse != nil {
		d.storesInUse() // admission uses these stores from now on
	}
	for _, n := range snap.Names() {
		d.metrics.WatchedObjects.WithLabelValues(n).Set(float64(snap.Stores[n].Len()))
	}
	if it.fleets.perGateway && d.status != nil && d.status.Synced() {
		it.fleets.sync(ctx, d.status.Gateways())
	}
	for _, f := range it.fleets.list() {
		if !force && !it.mustRender(f, snap) {
			// snap renders to f's bundle as its input did: the next change is diffed
			// from here, not from every change since f last rendered (the default
			// fleet seldom renders while Gateways' routes come and go)
			f.input = snap
			d.metrics.FleetRendersSkipped.WithLabelValues(f.name()).Inc()
			it.refreshLedger(f)
			continue
		}
		it.reconcileFleet(ctx, f, snap, changed)
	}
}

// mustRender reports whether snap can render f to another bundle than its last
// render: a changed object touches f's Gateways (or every fleet) and lies in a store
// that render read. (Not asked on a forced reconcile: the diff walks changed stores.)
func (it *iteration) mustRender(f *fleet, snap *snapshot.Snapshot) bool {
	c := it.scope.Diff(f.input, snap)
	return it.rendersFor(f, c)
}

// rendersFor reports whether change c makes f render: c touches f's Gateways (or
// every fleet) and lies in a store f's last render read.
func (it *iteration) rendersFor(f *fleet, c fleetscope.Change) bool {
	var read map[string]bool
	if r := f.storesRead.Load(); r != nil {
		read = *r
	}
	return c.Touches(f.gateway, it.fleets.rendersEveryGateway(f)) && c.ReadBy(read)
}

// refreshLedger records a skipped fleet's bundle again when the status writer now
// knows its Gateways at another revision than at its render (its informer lagged the
// watcher's): a render would produce the same bundle, recorded with these.
func (it *iteration) refreshLedger(f *fleet) {
	if it.d.status == nil || f.rendered == nil {
		return
	}
	gws := it.fleetGateways(f, f.rendered)
	if key := fmt.Sprint(gws); key != f.ledgered {
		f.ledgered = key
		it.statusRendered(f, f.hash, gws)
	}
}

// scopeOf classifies the config's watched resources for fleetscope.
func scopeOf(b *store.Builder) fleetscope.Scope {
	kinds := map[string]fleetscope.Kind{}
	for _, n := range b.Names() {
		r, _ := b.Resource(n)
		if gvr, err := watch.GVR(r.Watch); err == nil {
			kinds[n] = fleetscope.KindOf(gvr.Group, gvr.Resource)
		}
	}
	return fleetscope.New(kinds)
}

// reconcileFleet renders, validates and hands a bundle to f's deployer; changed is
// when the first change it carries was seen (zero: not traced).
func (it *iteration) reconcileFleet(ctx context.Context, f *fleet, snap *snapshot.Snapshot, changed time.Time) {
	d := it.d
	start := time.Now()
	f.input = nil // a failed render is tried again on the next reconcile
	res, err := it.renderFleet(ctx, f, snap, changed)
	d.metrics.ObserveRender(time.Since(start))
	d.metrics.FleetRenders.WithLabelValues(f.name()).Inc()
	scope := "" // errors of a Gateway's render name the Gateway
	if !f.isDefault() {
		scope = "gateway " + f.gateway.String()
	}
	if err != nil {
		reason, result := "RenderFailed", "render_error"
		if isValidation(err) {
			reason, result = "ValidationFailed", "validation_error"
			d.metrics.ValidationErrors.Inc()
		}
		err = wrapIf(err, scope)
		d.metrics.ObserveReconciliation(time.Since(start), result)
		d.log.Error("reconcile failed; the deployed config keeps serving", "reason", reason, "error", err)
		d.config.renderFailed(ctx, reason, err, it.generation)
		d.bus.Publish(reconciled{err: err})
		return
	}
	// The Gateways this bundle is made from, as rendered: a left-out Gateway is not in
	// it (or only at its last good generation).
	gws := it.fleetGateways(f, res.Snapshot)
	it.statusRendered(f, res.Bundle.Hash, gws)
	f.rendered, f.hash, f.ledgered = res.Snapshot, res.Bundle.Hash, fmt.Sprint(gws)
	if d.status != nil {
		d.status.SetNotes(f.gateway.String(), res.Notes)
	}
	f.input = snap
	f.storesRead.Store(&res.StoresRead)
	// Known to deliveries before a pod can answer for it.
	d.deliveries.handed(f, res.Bundle.Hash, f.dep.Pods(), changed)
	f.dep.SetDesired(res.Bundle)
	f.pub.SetDesired(res.Bundle)
	d.metrics.ObserveReconciliation(time.Since(start), "success")
	if f.isDefault() {
		d.config.rendered(ctx, res.Bundle.Hash, it.generation, len(it.cfg.Spec.WatchedResources))
		d.bus.Publish(reconciled{hash: res.Bundle.Hash})
	}
	d.log.Info("reconciled", "gateway", scope, "hash", res.Bundle.Hash[:12], "files", len(res.Bundle.Files), "took", time.Since(start).Round(time.Millisecond))
}

// wrapIf prefixes err with what, when both are set.
func wrapIf(err error, what string) error {
	if err == nil || what == "" {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// observeDeploy turns a deploy outcome into metrics and a log line.
func observeDeploy(log *slog.Logger, m *metrics.Metrics, o deploy.Outcome) {
	result := "success"
	if o.Err != nil {
		result = "error"
	}
	m.ObserveDeployment(o.Duration, o.Mode, result)
	if o.PlannedAhead {
		m.PlannedAhead.Inc()
	}
	if o.FastPathFailed {
		m.FastPathFailures.Inc()
		log.Warn("runtime operations failed; the agent reloaded instead", "pod", o.Pod, "error", o.FastPathError)
	}
	observeDivergence(m, o.Divergence())
	if o.Reloaded {
		m.HAProxyReloads.WithLabelValues(o.Pod, reloadReason(o)).Inc()
	}
	if o.Err != nil {
		log.Warn("deploy failed", "pod", o.Pod, "mode", o.Mode, "error", o.Err)
		return
	}
	attrs := []any{"pod", o.Pod, "hash", o.Hash[:12], "mode", o.Mode, "reloaded", o.Reloaded, "took", o.Duration.Round(time.Millisecond)}
	if len(o.Reasons) > 0 {
		r := o.Reasons[0]
		attrs = append(attrs, "reason", strings.TrimSpace(r.Section+" "+r.Directive+": "+r.Detail), "reasons", len(o.Reasons))
	}
	log.Info("deployed", attrs...)
}

// observeDivergence counts what deploy found diverging (the agent corrected it):
// haptic_deployment_runtime_divergence_total counts deployments,
// haptic_runtime_map_divergence_total maps.
func observeDivergence(m *metrics.Metrics, d deploy.Divergence) {
	if d.Deployments > 0 {
		m.DeploymentRuntimeDivergence.Add(float64(d.Deployments))
	}
	if d.Maps > 0 {
		m.RuntimeMapDivergence.Add(float64(d.Maps))
	}
}

// reloadReason is the low-cardinality reason label of haptic_haproxy_reloads_total:
// what kind of difference needed the reload (the full reasons go to the log).
func reloadReason(o deploy.Outcome) string {
	switch {
	case o.FastPathFailed:
		return "runtime-failure"
	case len(o.Reasons) == 0:
		return "full-apply" // first apply, drift or an unknown running set
	}
	section := o.Reasons[0].Section
	for _, kind := range []string{"backend", "frontend", "defaults", "global", "listen", "map", "cert", "crtlist", "file"} {
		if strings.HasPrefix(section, kind) {
			return kind
		}
	}
	return "config"
}
