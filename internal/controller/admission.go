package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/watch"
	"github.com/haproxy-haptic/haptic/internal/webhook"
)

// admission decides admission reviews with the running iteration: the proposed
// object is put in place in a copy of the live stores and the configuration is
// rendered with it. A render error denies the change, unless the configuration
// already fails without it (then the change is not to blame: admitted, with the
// error as a warning).
type admission struct{ c *Controller }

func (a admission) Validate(ctx context.Context, r webhook.Request) ([]string, error) {
	for _, it := range []*iteration{a.c.current.Load(), a.c.standby.Load()} {
		if it != nil && it.ready.Load() {
			return it.validateProposed(ctx, r)
		}
	}
	return []string{"HAPTIC did not validate this change: this replica has not synced its configuration yet"}, nil
}

// validateProposed renders every watched resource's view of the change that asks
// for validation (enableValidationWebhook).
func (it *iteration) validateProposed(ctx context.Context, r webhook.Request) ([]string, error) {
	if r.Unchanged() {
		return nil, nil // a no-op update renders what runs
	}
	key := r.Name
	if r.Namespace != "" {
		key = r.Namespace + "/" + r.Name
	}
	var warnings []string
	for _, name := range it.live.Builder().Names() {
		res, _ := it.live.Builder().Resource(name)
		if !res.Watch.EnableValidationWebhook || !sameResource(res.Watch, r.Resource) {
			continue
		}
		var obj map[string]any
		if r.Operation != admissionv1.Delete {
			obj = r.Object
		}
		snap, err := it.live.Proposed(name, key, obj)
		if err != nil {
			return warnings, fmt.Errorf("watchedResources[%s]: %w", name, err)
		}
		if snap == nil {
			continue // not ours (another class): nothing to render
		}
		ref := snapshot.Ref{Resource: name, Key: key}
		if o, ok := snap.Object(ref); ok && o.Refused != "" {
			return warnings, errors.New(o.Refused) // it would be left out: no render needed
		}
		for _, t := range it.admissionTargets(snap) {
			in := render.Input{Snapshot: snap, ExtraContext: t.extra, Suspects: []snapshot.Ref{ref}}
			res, err := it.engine.Render(ctx, in)
			if err != nil {
				if ctx.Err() != nil {
					return warnings, err
				}
				if _, baseErr := it.engine.Render(ctx, render.Input{Snapshot: it.live.Snapshot(), ExtraContext: t.extra}); baseErr != nil {
					warnings = append(warnings, "the configuration already fails to render without this change: "+baseErr.Error())
					continue
				}
				return warnings, err
			}
			if t.fleet != nil {
				// Most likely what the fleet delivers once the change is stored.
				t.fleet.dep.Prepare(res.Bundle)
			}
		}
	}
	return warnings, nil
}

// maxAdmissionFleets bounds the fleets one admission renders; a change that would
// make more of them render is checked by one render of every Gateway.
const maxAdmissionFleets = 4

// admissionTarget is a render that checks a proposed snapshot: with a fleet's
// extraContext, or (fleet nil) admissionContext's.
type admissionTarget struct {
	fleet *fleet
	extra map[string]any
}

// admissionTargets are the renders that check the proposed snapshot: those of the
// fleets the change would make render, as the reconcile decides it (a route: its
// Gateways' fleets), so that the admission's render is the one the fleet's next
// render takes up from (the same memo) and its bundle the one the fleet's pods
// can be planned for; or, when that is not known (a standby, a fleet that has
// not rendered, a change no fleet or too many fleets render), admissionContext's
// one render of every Gateway.
func (it *iteration) admissionTargets(proposed *snapshot.Snapshot) []admissionTarget {
	every := func() []admissionTarget { return []admissionTarget{{extra: it.admissionContext()}} }
	c := it.scope.Diff(it.live.Snapshot(), proposed)
	var out []admissionTarget
	for _, f := range it.fleets.list() {
		if f.storesRead.Load() == nil {
			return every()
		}
		if it.rendersFor(f, c) {
			out = append(out, admissionTarget{f, f.extra})
		}
	}
	if len(out) == 0 || len(out) > maxAdmissionFleets {
		return every()
	}
	return out
}

// admissionContext is the podSelector fleet's extraContext with every Gateway in it:
// under PerGateway provisioning each Gateway renders on its own pods, and one render
// of them all checks a route whatever Gateway it attaches to.
func (it *iteration) admissionContext() map[string]any {
	def := it.fleets.get(types.NamespacedName{})
	if def == nil { // a standby: no fleets
		return map[string]any{"gatewayControllerName": it.cfg.Spec.Gateways.GatewayControllerName()}
	}
	extra := maps.Clone(def.extra)
	delete(extra, "gateway")
	return extra
}

// sameResource: the review is about the watched resource (any version of its group
// and resource: the API server converts, and the stores hold what the watch reads).
func sameResource(w v1alpha1.WatchedResource, gvr schema.GroupVersionResource) bool {
	want, err := watch.GVR(w)
	return err == nil && want.Group == gvr.Group && want.Resource == gvr.Resource
}

// serveWebhook serves admission reviews until ctx ends.
func (c *Controller) serveWebhook(ctx context.Context) error {
	h := &webhook.Handler{Validator: admission{c}, Log: c.d.log, Timeout: webhookTimeout,
		Observe: func(gvr schema.GroupVersionResource, result string, took time.Duration) {
			c.d.metrics.WebhookRequests.WithLabelValues(gvr.GroupResource().String(), result).Inc()
			c.d.metrics.WebhookDuration.Observe(took.Seconds())
		}}
	if c.relaysToLeader() {
		h.Forward = &webhook.Forward{Leader: c.leaderWebhook, Failed: c.leaderFailed}
	}
	srv := &webhook.Server{Listener: c.opts.WebhookListener, CertDir: c.opts.WebhookCertDir, Log: c.d.log, Handler: h}
	c.d.log.Info("admission webhook listening", "addr", c.opts.WebhookListener.Addr().String())
	if err := srv.Run(ctx); err != nil {
		c.d.log.Error("admission webhook stopped", "error", err)
	}
	return nil
}

// webhookTimeout leaves the API server's default webhook timeout (10s) room to
// answer with the failurePolicy instead of timing out itself.
const webhookTimeout = 8 * time.Second
