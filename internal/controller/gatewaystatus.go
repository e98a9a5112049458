package controller

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/status"
	"github.com/haproxy-haptic/haptic/internal/status/writer"
)

// Status writes: a client of its own so that they do not queue behind the
// controller's reads; client-go's rate limiter paces them.
const (
	statusQPS   = 50
	statusBurst = 100
)

// startGatewayStatus starts the writer of Gateway API and Ingress status. It runs
// for the controller's lifetime; iterations feed it the data plane's addresses, the
// IngressClass and which Gateways are live.
func (c *Controller) startGatewayStatus(ctx context.Context) error {
	cfg := rest.CopyConfig(c.opts.Rest)
	if cfg.QPS < statusQPS {
		cfg.QPS, cfg.Burst = statusQPS, statusBurst
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c.status = writer.New(writer.Options{
		Dynamic: dyn, Metadata: md, Discovery: c.kube.Discovery(), Log: c.log,
		OnWrite: func(kind string) { c.metrics.StatusWrites.WithLabelValues(kind).Inc() },
		// With per-Gateway pods, a new or deleted Gateway changes the fleets.
		OnGateways: func(map[types.NamespacedName]int64) { c.gatewaysChanged() },
	})
	go func() {
		if err := c.status.Run(ctx); err != nil {
			c.log.Error("status writer stopped", "error", err)
		}
	}()
	return nil
}

// gatewaysChanged asks the running iteration to reconcile (and sync its Gateway
// fleets), but only once it has reconciled from synced stores. The status writer's
// informers are not the watcher's: a reconcile they triggered before the watched
// resources synced rendered a partial snapshot (a Gateway held, its GatewayClass
// not listed yet: a bundle without its listeners) whose deploy made the Gateway
// Programmed. The first reconcile after the sync reads every Gateway anyway.
func (c *Controller) gatewaysChanged() {
	if it := c.current.Load(); it != nil && it.ready.Load() {
		c.bus.Publish(resourceChanged{})
	}
}

// rendered remembers which Gateways (object and generation) a bundle was rendered
// from, so that a deploy of that bundle can mark them Programmed. Fleets may render
// identical bundles (e.g. two new Gateways before the stores hold them): the
// Gateways of every render of a hash are kept, and a deploy to a fleet's pod marks
// only those that fleet serves.
type rendered struct {
	mu     sync.Mutex
	hashes map[string]map[types.NamespacedName]writer.Revision
	order  []string
}

const renderedKept = 16 // bundles in flight at most (pacing keeps it far lower)

// statusRendered is called with every bundle handed to a deployer and the
// Gateways it was rendered from.
func (it *iteration) statusRendered(hash string, gws map[types.NamespacedName]writer.Revision) {
	s := it.c.status
	if s == nil {
		return
	}
	r := &it.rendered
	r.mu.Lock()
	if r.hashes == nil {
		r.hashes = map[string]map[types.NamespacedName]writer.Revision{}
	}
	rec, ok := r.hashes[hash]
	if !ok {
		rec = map[types.NamespacedName]writer.Revision{}
		r.hashes[hash] = rec
		r.order = append(r.order, hash)
	}
	for gw, rev := range gws {
		// The same bundle from a newer generation of the same object: the bundle
		// holds that generation too.
		if cur, ok := rec[gw]; ok && cur.UID == rev.UID && cur.Generation > rev.Generation {
			continue
		}
		rec[gw] = rev
	}
	for len(r.order) > renderedKept {
		delete(r.hashes, r.order[0])
		r.order = r.order[1:]
	}
	r.mu.Unlock()
	s.Trigger()
}

// statusDeployed is called with every successful deploy outcome of a fleet: a
// bundle live on one of its pods makes the Gateways it was rendered from that the
// fleet serves Programmed — never another fleet's Gateway.
func (it *iteration) statusDeployed(f *fleet, o deploy.Outcome) {
	if it.c.status == nil {
		return
	}
	r := &it.rendered
	r.mu.Lock()
	live := map[types.NamespacedName]writer.Revision{}
	for gw, rev := range r.hashes[o.Hash] {
		if it.serves(f, gw) {
			live[gw] = rev
		}
	}
	r.mu.Unlock()
	if len(live) > 0 {
		it.markProgrammed(live)
	}
}

// statusPods passes the HAProxy pods' IPs on as the data plane's addresses.
func (it *iteration) statusPods(targets []deploy.Pod) {
	if it.c.status == nil {
		return
	}
	ips := make([]string, 0, len(targets))
	for _, p := range targets {
		ips = append(ips, p.IP)
	}
	it.c.status.SetAddresses(ips)
}

// statusConfig passes the config's IngressClass (extraContext.ingressClass).
func (it *iteration) statusConfig() {
	if it.c.status == nil {
		return
	}
	var raw []byte
	if ec := it.cfg.Spec.TemplatingSettings.ExtraContext; ec != nil {
		raw = ec.Raw
	}
	it.c.status.SetIngressClass(status.IngressClassOf(raw))
	it.c.status.SetControllerName(gwv1.GatewayController(it.cfg.Spec.Gateways.GatewayControllerName()))
}
