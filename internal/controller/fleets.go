package controller

import (
	"context"
	"maps"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/publish"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/status/writer"
	"github.com/haproxy-haptic/haptic/internal/watch"
)

// A fleet is a set of HAProxy pods that run one rendering of the config: the
// podSelector's pods, or — with PerGateway provisioning — one Gateway's pods,
// rendered with extraContext.gateway set to that Gateway.
type fleet struct {
	gateway  types.NamespacedName // zero for the podSelector's fleet
	selector map[string]string
	extra    map[string]any // extraContext overrides for its render
	infra    gatewayInfra   // what its Gateway asked of the generated resources (under fleets.mu)
	dep      *deploy.Deployer
	pub      *publish.Publisher // its HAProxyCfg
	cancel   context.CancelFunc
}

func (f *fleet) isDefault() bool { return f.gateway == types.NamespacedName{} }

// noGateway is extraContext.gateway for the podSelector's fleet when every Gateway
// has pods of its own: it names no Gateway.
const noGateway = "-"

// fleets holds an iteration's fleets.
type fleets struct {
	mu         sync.Mutex
	byKey      map[types.NamespacedName]*fleet
	programmed map[types.NamespacedName]writer.Revision // Gateway → revision live on one of its pods
	addresses  map[types.NamespacedName][]string        // Gateway → its pods' IPs, once discovered
}

// perGateway reports whether Gateways get pods of their own.
func (it *iteration) perGateway() bool {
	return it.cfg.Spec.Gateways.Provisioning == v1alpha1.GatewaysPerGateway
}

// startFleet starts a fleet's deployer, pod discovery and drift loop; they stop
// with ctx or the fleet's cancel.
func (it *iteration) startFleet(ctx context.Context, gw types.NamespacedName, selector map[string]string, infra gatewayInfra, extra map[string]any) *fleet {
	if gw == (types.NamespacedName{}) {
		// The podSelector's fleet starts first, before any pod discovery reports:
		// tell the status writer whose addresses Gateways get (their own pods' with
		// per-Gateway provisioning, never the podSelector's).
		it.publishGatewayAddresses()
	}
	ctx, cancel := context.WithCancel(ctx)
	extra = maps.Clone(extra)
	extra["gatewayControllerName"] = it.cfg.Spec.Gateways.GatewayControllerName()
	f := &fleet{gateway: gw, selector: selector, extra: extra, infra: infra, cancel: cancel}
	durations := it.cfg.Spec.Dataplane.ParsedDurations()
	f.dep = deploy.New(ctx, deploy.Options{
		Port: int(it.cfg.Spec.Dataplane.Port), Username: it.creds.username, Password: it.creds.password,
		SyncTimeout: durations.Sync, MinInterval: durations.MinDeployment, Log: it.c.log, HTTP: it.c.opts.AgentHTTP,
		OnOutcome: func(o deploy.Outcome) {
			it.observeDeploy(o)
			if o.Err == nil {
				it.statusDeployed(f, o)
			}
			f.pub.OnOutcome(o)
		},
	})
	f.pub = it.c.startPublisher(ctx, it.cfg, f)
	it.fleets.mu.Lock()
	if it.fleets.byKey == nil {
		it.fleets.byKey = map[types.NamespacedName]*fleet{}
	}
	it.fleets.byKey[gw] = f
	it.fleets.mu.Unlock()
	go it.driftLoop(ctx, f.dep, durations.DriftPrevention)
	if !f.isDefault() {
		go func() {
			if err := it.discoverPods(ctx, f); err != nil {
				it.c.log.Warn("gateway pod discovery stopped", "gateway", gw, "error", err)
			}
		}()
	}
	return f
}

// list returns the fleets, the podSelector's first, then by Gateway.
func (fs *fleets) list() []*fleet {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]*fleet, 0, len(fs.byKey))
	for _, f := range fs.byKey {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].gateway.String() < out[j].gateway.String() })
	return out
}

// syncGatewayFleets makes the Gateway fleets those of gws: new Gateways get a
// Deployment and a fleet, gone ones lose both.
func (it *iteration) syncGatewayFleets(ctx context.Context, gws map[types.NamespacedName]int64) {
	for gw := range gws {
		obj, ok := it.c.status.Gateway(gw)
		if !ok {
			continue
		}
		infra := infraOf(obj, it.cfg.Spec.PodSelector.MatchLabels)
		it.fleets.mu.Lock()
		f, exists := it.fleets.byKey[gw]
		same := exists && f.infra.fingerprint() == infra.fingerprint()
		it.fleets.mu.Unlock()
		if same {
			continue
		}
		sel, err := it.ensureGatewayDeployment(ctx, gw, infra)
		if err != nil {
			it.c.log.Warn("provision gateway pods; retrying", "gateway", gw, "error", err, "in", gatewayRetry)
			it.retryGateways()
			continue
		}
		// The Service is for people; its failure (e.g. a Service of that name that is
		// not the Gateway's) never holds the data plane back: retried, not waited for.
		recorded := infra
		if err := it.ensureGatewayService(ctx, obj, infra); err != nil {
			it.c.log.Warn("gateway service; retrying", "gateway", gw, "error", err, "in", gatewayRetry)
			recorded = gatewayInfra{}
			it.retryGateways()
		}
		it.fleets.mu.Lock()
		if exists {
			f.infra = recorded
			it.fleets.mu.Unlock()
			it.syncEndpoints(ctx, f)
			continue
		}
		it.fleets.mu.Unlock()
		// Its addresses come from its own pod discovery (setFleetPods); until then
		// the status writer gives it none (it is new) — never the podSelector's.
		it.c.log.Info("gateway fleet started", "gateway", gw)
		it.startFleet(ctx, gw, sel, recorded, map[string]any{"gateway": gw.Namespace + "/" + gw.Name})
	}
	for _, f := range it.fleets.list() {
		if _, ok := gws[f.gateway]; ok || f.isDefault() {
			continue
		}
		f.cancel()
		it.forgetLeftOut(f)
		it.c.status.SetNotes(f.gateway.String(), nil)
		if err := f.pub.Delete(ctx); err != nil {
			it.c.log.Warn("remove the HAProxyCfg of a deleted gateway", "gateway", f.gateway, "error", err)
		}
		it.fleets.mu.Lock()
		delete(it.fleets.byKey, f.gateway)
		delete(it.fleets.addresses, f.gateway)
		_, wasProgrammed := it.fleets.programmed[f.gateway]
		delete(it.fleets.programmed, f.gateway)
		programmed := maps.Clone(it.fleets.programmed)
		it.fleets.mu.Unlock()
		if wasProgrammed {
			it.c.status.SetProgrammedRevisions(programmed)
		}
		it.c.log.Info("gateway fleet stopped", "gateway", f.gateway)
	}
	if err := it.deleteStaleGatewayDeployments(ctx, gws); err != nil {
		it.c.log.Warn("remove pods of deleted gateways", "error", err)
	}
	it.publishGatewayAddresses()
}

// fleetGateways are the Gateways (object and generation) a fleet's render of snap
// is made from: its own Gateway, or — for the podSelector's fleet when Gateways
// share it — every Gateway of our classes, as snap holds them. The status writer's
// informer may be ahead of the stores snap was taken from (a Gateway it already
// sees, a newer generation): what snap does not hold is not in the render, and a
// deploy of it must not make that Gateway Programmed.
func (it *iteration) fleetGateways(f *fleet, snap *snapshot.Snapshot) map[types.NamespacedName]writer.Revision {
	s := it.c.status
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
	case it.perGateway():
		return nil
	}
	return renderedGateways(all, it.gatewayStores(), snap)
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

// renderedGateways returns the Gateways of want (as the status writer sees them)
// that the stores of snap hold, at the object and generation held there: what a
// render of snap is made from. Without a full store of Gateways (none watched, or
// on-demand) what a render holds is unknown and want is taken as it is.
func renderedGateways(want map[types.NamespacedName]writer.Revision, stores []string, snap *snapshot.Snapshot) map[types.NamespacedName]writer.Revision {
	held := map[types.NamespacedName]writer.Revision{}
	known := false
	for _, name := range stores {
		st := snap.Stores[name]
		if st == nil || st.OnDemand != nil {
			continue
		}
		known = true
		for _, o := range st.List() {
			meta, _ := o.Raw["metadata"].(map[string]any)
			uid, _ := meta["uid"].(string)
			held[types.NamespacedName{Namespace: o.Namespace, Name: o.Name}] = writer.Revision{UID: types.UID(uid), Generation: toInt64(meta["generation"])}
		}
	}
	if !known {
		return want
	}
	out := make(map[types.NamespacedName]writer.Revision, len(want))
	for nn, w := range want {
		r, ok := held[nn]
		switch {
		case !ok:
		case r.Generation == 0: // metadata.generation not kept (watchedResourcesIgnoreFields)
			out[nn] = writer.Revision{UID: r.UID, Generation: w.Generation}
		default:
			out[nn] = r
		}
	}
	return out
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

// serves reports whether a fleet's pods serve a Gateway: its own, or — the
// podSelector's fleet when Gateways share it — any.
func (it *iteration) serves(f *fleet, gw types.NamespacedName) bool {
	if !f.isDefault() {
		return f.gateway == gw
	}
	return !it.perGateway()
}

// markProgrammed records that gws are live on a pod of their fleet and tells the
// status writer.
func (it *iteration) markProgrammed(gws map[types.NamespacedName]writer.Revision) {
	fs := &it.fleets
	fs.mu.Lock()
	if fs.programmed == nil {
		fs.programmed = map[types.NamespacedName]writer.Revision{}
	}
	for gw, r := range gws {
		if cur, ok := fs.programmed[gw]; ok && cur.UID == r.UID && cur.Generation > r.Generation {
			continue // a newer bundle of the same object was live already
		}
		fs.programmed[gw] = r
	}
	all := maps.Clone(fs.programmed)
	fs.mu.Unlock()
	it.c.status.SetProgrammedRevisions(all)
}

// setFleetPods records a fleet's pods: the podSelector's are the data plane's
// addresses; a Gateway's are that Gateway's.
func (it *iteration) setFleetPods(ctx context.Context, f *fleet, targets []deploy.Pod) {
	f.dep.SetPods(targets)
	if f.isDefault() {
		it.statusPods(targets)
		it.c.metrics.HAProxyPods.Set(float64(len(targets)))
		return
	}
	ips := make([]string, 0, len(targets))
	for _, p := range targets {
		ips = append(ips, p.IP)
	}
	fs := &it.fleets
	fs.mu.Lock()
	if fs.addresses == nil {
		fs.addresses = map[types.NamespacedName][]string{}
	}
	fs.addresses[f.gateway] = ips
	fs.mu.Unlock()
	it.publishGatewayAddresses()
	it.syncEndpoints(ctx, f)
}

// syncEndpoints makes a Gateway's Service list its fleet's pods. A failure forgets
// the fleet's infrastructure, so that the next Gateway sync (soon) redoes it all.
func (it *iteration) syncEndpoints(ctx context.Context, f *fleet) {
	fs := &it.fleets
	fs.mu.Lock()
	infra, ips := f.infra, fs.addresses[f.gateway]
	fs.mu.Unlock()
	if infra.name == "" {
		return // its Service is not there yet (retried with the Gateway)
	}
	err := it.syncGatewayEndpoints(ctx, f.gateway, infra, ips)
	if err == nil || ctx.Err() != nil {
		return
	}
	it.c.log.Warn("update the endpoints of a gateway's service; retrying", "gateway", f.gateway, "error", err, "in", gatewayRetry)
	fs.mu.Lock()
	f.infra = gatewayInfra{}
	fs.mu.Unlock()
	it.retryGateways()
}

// retryGateways syncs the Gateways again after gatewayRetry.
func (it *iteration) retryGateways() {
	time.AfterFunc(gatewayRetry, it.c.gatewaysChanged)
}

// publishGatewayAddresses tells the status writer whose addresses a Gateway gets:
// with per-Gateway pods, those its own pod discovery found (and none before it
// reported); otherwise (nil) the podSelector's pods'.
func (it *iteration) publishGatewayAddresses() {
	if it.c.status == nil {
		return
	}
	if !it.perGateway() {
		it.c.status.SetGatewayAddresses(nil)
		return
	}
	fs := &it.fleets
	fs.mu.Lock()
	all := maps.Clone(fs.addresses)
	fs.mu.Unlock()
	if all == nil {
		all = map[types.NamespacedName][]string{}
	}
	it.c.status.SetGatewayAddresses(all)
}

// gatewayRetry is how soon a Gateway whose pods could not be provisioned is tried again.
const gatewayRetry = 5 * time.Second
