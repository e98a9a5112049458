package controller

import (
	"context"

	"fmt"
	"k8s.io/apimachinery/pkg/types"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/events"
	"github.com/haproxy-haptic/haptic/internal/fieldpath"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/store"
	"github.com/haproxy-haptic/haptic/internal/validate"
	"github.com/haproxy-haptic/haptic/internal/watch"
)

// iteration is the lifetime of one config: its compiled templates, watchers,
// reconciler, pod discovery and deployer.
type iteration struct {
	c          *Controller
	cfg        *v1alpha1.HAProxyTemplateConfig
	generation int64
	engine     *render.Engine
	live       *store.Live
	ignore     []fieldpath.Path
	checker    *validate.Checker
	rendered   rendered    // Gateways each bundle was rendered from (gatewaystatus.go)
	good       goodRenders // per fleet: the last good snapshot, what was left out (leftout.go)
	creds      credentials
	fleets     fleets      // the pods that receive configs (fleets.go)
	ready      atomic.Bool // the stores synced and were reconciled once: admission may use them
	stop       func()
}

// prepare compiles a config; an error leaves the running iteration alone.
func (c *Controller) prepare(cfg *v1alpha1.HAProxyTemplateConfig, generation int64) (*iteration, error) {
	reg, err := pipeline.Registry(c.opts.SchemaDir)
	if err != nil {
		return nil, err
	}
	b, err := store.NewBuilder(&cfg.Spec, reg)
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Spec.WatchedResources {
		if _, err := watch.GVR(w); err != nil {
			return nil, err
		}
	}
	eng, err := render.Compile(&cfg.Spec, render.Options{Types: b.Types()})
	if err != nil {
		return nil, fmt.Errorf("compile templates: %w", err)
	}
	it := &iteration{c: c, cfg: cfg, generation: generation, engine: eng, live: store.NewLive(b),
		checker: &validate.Checker{Binary: c.opts.HAProxyBinary, Layout: render.LayoutOf(&cfg.Spec)}}
	for _, p := range cfg.Spec.WatchedResourcesIgnoreFields {
		path, err := fieldpath.Parse(p)
		if err != nil {
			return nil, fmt.Errorf("spec.watchedResourcesIgnoreFields: %w", err)
		}
		it.ignore = append(it.ignore, path)
	}
	return it, nil
}

func (it *iteration) run(ctx context.Context) error {
	c := it.c
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	creds, err := it.credentials(ctx)
	if err != nil {
		return err
	}
	it.creds = creds
	if len(it.cfg.Spec.PodSelector.MatchLabels) == 0 {
		return fmt.Errorf("spec.podSelector.matchLabels is empty: no HAProxy pods to deliver to")
	}
	extra := map[string]any{}
	if it.perGateway() {
		extra["gateway"] = noGateway
	}
	def := it.startFleet(ctx, types.NamespacedName{}, it.cfg.Spec.PodSelector.MatchLabels, gatewayInfra{}, extra)
	it.statusConfig()
	sub := c.bus.Subscribe("reconciler", 100, EventResourceChanged)
	defer sub.Unsubscribe()

	w := &watch.Watcher{
		Dynamic: c.dyn, Metadata: c.meta, Live: it.live, Log: c.log, Ignore: it.ignore,
		Notify: func(resource string) {
			if resource != "" {
				c.metrics.DebounceFired.WithLabelValues(resource).Inc()
			}
			c.bus.Publish(resourceChanged{resource: resource})
		},
		OnEvent:   func(resource, kind string) { c.metrics.ResourceEvents.WithLabelValues(resource, kind).Inc() },
		OnDropped: func(resource, reason string) { c.metrics.WatchEventsDropped.WithLabelValues(resource, reason).Inc() },
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Add(2)
	go func() { defer wg.Done(); errs <- w.Run(ctx) }()
	go func() { defer wg.Done(); errs <- it.discoverPods(ctx, def) }()
	defer wg.Wait()

	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errs:
			if err != nil {
				return err
			}
		case <-sub.Lost():
			// A change notification was dropped: the stores are still right, so a
			// full reconcile from them loses nothing.
			c.log.Warn("reconciler lost a critical event; reconciling from the stores")
			it.reconcile(ctx)
		case <-sub.C():
			drain(sub)
			it.reconcile(ctx)
		}
	}
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

// reconcile renders the current snapshot for every fleet, validates each bundle
// and hands it to the fleet's deployer.
func (it *iteration) reconcile(ctx context.Context) {
	c := it.c
	snap := it.live.Snapshot()
	it.ready.Store(true)
	c.standbyDone.done() // admission uses these stores from now on
	for _, n := range snap.Names() {
		c.metrics.WatchedObjects.WithLabelValues(n).Set(float64(snap.Stores[n].Len()))
	}
	if it.perGateway() && c.status != nil && c.status.Synced() {
		it.syncGatewayFleets(ctx, c.status.Gateways())
	}
	for _, f := range it.fleets.list() {
		it.reconcileFleet(ctx, f, snap)
	}
}

func (it *iteration) reconcileFleet(ctx context.Context, f *fleet, snap *snapshot.Snapshot) {
	c := it.c
	start := time.Now()
	res, err := it.renderFleet(ctx, f, snap)
	c.metrics.ObserveRender(time.Since(start))
	scope := "" // errors of a Gateway's render name the Gateway
	if !f.isDefault() {
		scope = "gateway " + f.gateway.String()
	}
	if err != nil && !isValidation(err) {
		err = wrapIf(err, scope)
		c.metrics.ObserveReconciliation(time.Since(start), "render_error")
		it.reportFailure(ctx, "RenderFailed", err)
		c.bus.Publish(reconciled{err: err})
		return
	}
	if err != nil {
		err = wrapIf(err, scope)
		c.metrics.ValidationErrors.Inc()
		c.metrics.ObserveReconciliation(time.Since(start), "validation_error")
		it.reportFailure(ctx, "ValidationFailed", err)
		c.bus.Publish(reconciled{err: err})
		return
	}
	// The Gateways this bundle is made from, as rendered: a left-out Gateway is not in
	// it (or only at its last good generation).
	it.statusRendered(res.Bundle.Hash, it.fleetGateways(f, res.Snapshot))
	if c.status != nil {
		c.status.SetNotes(f.gateway.String(), res.Notes)
	}
	f.dep.SetDesired(res.Bundle)
	f.pub.SetDesired(res.Bundle)
	c.metrics.ObserveReconciliation(time.Since(start), "success")
	if f.isDefault() {
		it.reportSuccess(ctx, res.Bundle.Hash)
		c.bus.Publish(reconciled{hash: res.Bundle.Hash})
	}
	c.log.Info("reconciled", "gateway", scope, "hash", res.Bundle.Hash[:12], "files", len(res.Bundle.Files), "took", time.Since(start).Round(time.Millisecond))
}

// wrapIf prefixes err with what, when both are set.
func wrapIf(err error, what string) error {
	if err == nil || what == "" {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (it *iteration) observeDeploy(o deploy.Outcome) {
	m := it.c.metrics
	result := "success"
	if o.Err != nil {
		result = "error"
	}
	m.ObserveDeployment(o.Duration, o.Mode, result)
	if o.FastPathFailed {
		m.FastPathFailures.Inc()
		it.c.log.Warn("runtime operations failed; the agent reloaded instead", "pod", o.Pod, "error", o.FastPathError)
	}
	observeDivergence(m, o)
	if o.Reloaded {
		m.HAProxyReloads.WithLabelValues(o.Pod, reloadReason(o)).Inc()
	}
	if o.Err != nil {
		it.c.log.Warn("deploy failed", "pod", o.Pod, "mode", o.Mode, "error", o.Err)
		return
	}
	attrs := []any{"pod", o.Pod, "hash", o.Hash[:12], "mode", o.Mode, "reloaded", o.Reloaded, "took", o.Duration.Round(time.Millisecond)}
	if len(o.Reasons) > 0 {
		r := o.Reasons[0]
		attrs = append(attrs, "reason", strings.TrimSpace(r.Section+" "+r.Directive+": "+r.Detail), "reasons", len(o.Reasons))
	}
	it.c.log.Info("deployed", attrs...)
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
