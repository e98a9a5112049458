package controller

import (
	"sort"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/status/writer"
	"github.com/haproxy-haptic/haptic/internal/watch"
)

// The status writer (internal/status/writer) computes and writes Gateway API and
// Ingress status; this file only passes it what the iteration knows: which Gateways
// each bundle holds, which bundles went live on which fleet, the config's classes.

// fleetGateways are the Gateways (object and generation) a fleet's render of snap
// is made from: its own Gateway, or — for the podSelector's fleet when Gateways
// share it — every Gateway of our classes, as snap holds them.
func (it *iteration) fleetGateways(f *fleet, snap *snapshot.Snapshot) map[types.NamespacedName]writer.Revision {
	s := it.d.status
	if s == nil {
		return nil
	}
	all := s.GatewayRevisions()
	switch {
	case !f.isDefault():
		r, ok := all[f.gateway]
		if !ok {
			return nil
		}
		all = map[types.NamespacedName]writer.Revision{f.gateway: r}
	case it.fleets.perGateway:
		return nil
	}
	return writer.RenderedGateways(all, it.gatewayStores(), snap)
}

// gatewayStores are the names of the watched resources that hold Gateways.
func (it *iteration) gatewayStores() []string {
	var out []string
	for name, w := range it.cfg.Spec.WatchedResources {
		if gvr, err := watch.GVR(w); err == nil && gvr.Group == gwv1.GroupName && gvr.Resource == "gateways" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// statusRendered is called with every bundle of fleet f handed to its deployer and
// the Gateways it was rendered from.
func (it *iteration) statusRendered(f *fleet, hash string, gws map[types.NamespacedName]writer.Revision) {
	if it.d.status == nil {
		return
	}
	f.ledger.Rendered(hash, gws)
	it.d.status.Trigger()
}

// statusDeployed is called with every successful deploy outcome of a fleet: a
// bundle live on one of its pods makes the Gateways it was rendered from that the
// fleet serves Programmed — never another fleet's Gateway.
func (it *iteration) statusDeployed(f *fleet, o deploy.Outcome) {
	if it.d.status == nil {
		return
	}
	live := f.ledger.Deployed(o.Hash, func(gw types.NamespacedName) bool { return it.fleets.serves(f, gw) })
	if len(live) > 0 {
		it.fleets.markProgrammed(live)
	}
}

// statusConfig passes the config's IngressClass (extraContext.ingressClass),
// GatewayClass controllerName and claimed Gateway API features.
func (it *iteration) statusConfig() {
	if it.d.status == nil {
		return
	}
	var raw []byte
	if ec := it.cfg.Spec.TemplatingSettings.ExtraContext; ec != nil {
		raw = ec.Raw
	}
	it.d.status.SetConfig(raw, gwv1.GatewayController(it.cfg.Spec.Gateways.GatewayControllerName()),
		it.cfg.Spec.Gateways.SupportedFeatures)
}
