package controller

import (
	"context"
	"log/slog"
	"maps"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/provision"
	"github.com/haproxy-haptic/haptic/internal/publish"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/status/writer"
)

// A fleet is a set of HAProxy pods that run one rendering of the config: the
// podSelector's pods, or — with PerGateway provisioning — one Gateway's pods,
// rendered with extraContext.gateway set to that Gateway.
type fleet struct {
	gateway  types.NamespacedName // zero for the podSelector's fleet
	selector map[string]string
	extra    map[string]any  // extraContext overrides for its render
	infra    provision.Infra // what its Gateway asked of the generated resources (under fleetSet.mu)
	dep      *deploy.Deployer
	pub      *publish.Publisher // its HAProxyCfg
	cancel   context.CancelFunc
	// input is the snapshot its last successful render started from, or a later one
	// that renders to the same bundle (nil: render on the next reconcile); rendered,
	// hash and ledgered what came out of it: the snapshot as rendered, the bundle's hash and the Gateway revisions recorded for
	// it (fmt.Sprint). The reconcile loop alone reads and writes them.
	input    *snapshot.Snapshot
	rendered *snapshot.Snapshot
	hash     string
	ledgered string
	// storesRead are the stores its last render queried (a change to others cannot
	// change its bundle); admission reads them too.
	storesRead atomic.Pointer[map[string]bool]
	// ledger holds the Gateways each of its bundles was rendered from, until a deploy
	// of one makes them Programmed (gatewaystatus.go). A ledger of its own: with one
	// for every fleet, the renders of many new Gateways at once pushed a fleet's
	// bundle out before its pod took it, and that Gateway never became Programmed.
	ledger writer.Ledger
}

// rendersEveryGateway: the podSelector's fleet without per-Gateway provisioning
// renders all Gateways (with it, it renders none).
func (fs *fleetSet) rendersEveryGateway(f *fleet) bool { return f.isDefault() && !fs.perGateway }

func (f *fleet) isDefault() bool { return f.gateway == types.NamespacedName{} }

// name is the fleet's label in metrics and logs.
func (f *fleet) name() string {
	if f.isDefault() {
		return "default"
	}
	return f.gateway.String()
}

// noGateway is extraContext.gateway for the podSelector's fleet when every Gateway
// has pods of its own: it names no Gateway.
const noGateway = "-"

// gatewayRetry is how soon a Gateway whose pods could not be provisioned is tried again.
const gatewayRetry = 5 * time.Second

// fleetSet holds an iteration's fleets and, with per-Gateway provisioning, keeps one
// fleet per Gateway of our classes. Its dependencies are explicit: the provisioner
// makes the Gateways' Kubernetes resources, the status writer is told which
// Gateways are live and at which addresses, and the iteration's start and stopped
// wire a fleet's deployer, publisher and pod discovery.
type fleetSet struct {
	perGateway  bool
	podSelector map[string]string
	prov        *provision.Provisioner // nil unless perGateway
	status      *writer.Manager        // nil: nothing reports status
	log         *slog.Logger
	// start starts a Gateway's fleet (its deployer, publisher and pod discovery)
	// and adds it to the set.
	start func(ctx context.Context, gw types.NamespacedName, selector map[string]string, infra provision.Infra) *fleet
	// stopped forgets what the iteration keeps about a fleet that is gone.
	stopped func(*fleet)
	// retry asks for another Gateway sync (after gatewayRetry).
	retry func()
	// swept is the Gateway set whose stale pods were last removed: the sweep lists
	// Deployments, an API call that every reconcile would otherwise make (and wait
	// for the client's rate limiter).
	swept string

	mu         sync.Mutex
	byKey      map[types.NamespacedName]*fleet
	programmed map[types.NamespacedName]writer.Revision // Gateway → revision live on one of its pods
	addresses  map[types.NamespacedName][]string        // Gateway → its pods' IPs, once discovered
}

// add records a started fleet.
func (fs *fleetSet) add(f *fleet) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.byKey == nil {
		fs.byKey = map[types.NamespacedName]*fleet{}
	}
	fs.byKey[f.gateway] = f
}

// get returns the fleet of a Gateway (the zero name: the podSelector's).
func (fs *fleetSet) get(gw types.NamespacedName) *fleet {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.byKey[gw]
}

// list returns the fleets, the podSelector's first, then by Gateway.
func (fs *fleetSet) list() []*fleet {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]*fleet, 0, len(fs.byKey))
	for _, f := range fs.byKey {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].gateway.String() < out[j].gateway.String() })
	return out
}

// sync makes the Gateway fleets those of gws: new Gateways get their resources
// provisioned and a fleet, changed ones their resources updated, gone ones lose both.
func (fs *fleetSet) sync(ctx context.Context, gws map[types.NamespacedName]int64) {
	for gw := range gws {
		obj, ok := fs.status.Gateway(gw)
		if !ok {
			continue
		}
		infra := provision.InfraOf(obj, fs.status.ListenerSetsOf(obj), fs.podSelector)
		fs.mu.Lock()
		f, exists := fs.byKey[gw]
		same := exists && f.infra.Fingerprint() == infra.Fingerprint()
		fs.mu.Unlock()
		if same {
			continue
		}
		res, err := fs.prov.Ensure(ctx, obj, infra)
		if err != nil {
			fs.log.Warn("provision gateway pods; retrying", "gateway", gw, "error", err, "in", gatewayRetry)
			fs.retry()
			continue
		}
		if res.ServiceErr != nil {
			fs.log.Warn("gateway service; retrying", "gateway", gw, "error", res.ServiceErr, "in", gatewayRetry)
			fs.retry()
		}
		fs.mu.Lock()
		if exists {
			f.infra = res.Infra
			fs.mu.Unlock()
			fs.syncEndpoints(ctx, f)
			continue
		}
		fs.mu.Unlock()
		// Its addresses come from its own pod discovery (setPods); until then the
		// status writer gives it none (it is new) — never the podSelector's.
		fs.log.Info("gateway fleet started", "gateway", gw)
		fs.start(ctx, gw, res.Selector, res.Infra)
	}
	for _, f := range fs.list() {
		if _, ok := gws[f.gateway]; ok || f.isDefault() {
			continue
		}
		fs.remove(ctx, f)
	}
	if set := gatewaySet(gws); set != fs.swept {
		if err := fs.prov.DeleteStale(ctx, gws); err != nil {
			fs.log.Warn("remove pods of deleted gateways", "error", err)
		} else {
			fs.swept = set
		}
	}
	fs.publishAddresses()
}

// gatewaySet names a set of Gateways (sorted, one string).
func gatewaySet(gws map[types.NamespacedName]int64) string {
	names := make([]string, 0, len(gws))
	for gw := range gws {
		names = append(names, gw.String())
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// remove stops the fleet of a Gateway that is gone and forgets it.
func (fs *fleetSet) remove(ctx context.Context, f *fleet) {
	f.cancel()
	fs.stopped(f)
	fs.status.SetNotes(f.gateway.String(), nil)
	if err := f.pub.Delete(ctx); err != nil {
		fs.log.Warn("remove the HAProxyCfg of a deleted gateway", "gateway", f.gateway, "error", err)
	}
	fs.mu.Lock()
	delete(fs.byKey, f.gateway)
	delete(fs.addresses, f.gateway)
	_, wasProgrammed := fs.programmed[f.gateway]
	delete(fs.programmed, f.gateway)
	programmed := maps.Clone(fs.programmed)
	fs.mu.Unlock()
	if wasProgrammed {
		fs.status.SetProgrammedRevisions(programmed)
	}
	fs.log.Info("gateway fleet stopped", "gateway", f.gateway)
}

// serves reports whether a fleet's pods serve a Gateway: its own, or — the
// podSelector's fleet when Gateways share it — any.
func (fs *fleetSet) serves(f *fleet, gw types.NamespacedName) bool {
	if !f.isDefault() {
		return f.gateway == gw
	}
	return !fs.perGateway
}

// markProgrammed records that gws are live on a pod of their fleet and tells the
// status writer.
func (fs *fleetSet) markProgrammed(gws map[types.NamespacedName]writer.Revision) {
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
	fs.status.SetProgrammedRevisions(all)
}

// setGatewayPods records the pods of a Gateway's fleet: that Gateway's addresses and
// its Service's endpoints.
func (fs *fleetSet) setGatewayPods(ctx context.Context, f *fleet, targets []deploy.Pod) {
	ips := make([]string, 0, len(targets))
	for _, p := range targets {
		ips = append(ips, p.IP)
	}
	fs.mu.Lock()
	if fs.addresses == nil {
		fs.addresses = map[types.NamespacedName][]string{}
	}
	fs.addresses[f.gateway] = ips
	fs.mu.Unlock()
	fs.publishAddresses()
	fs.syncEndpoints(ctx, f)
}

// syncEndpoints makes a Gateway's Service list its fleet's pods. A failure forgets
// the fleet's infrastructure, so that the next Gateway sync (soon) redoes it all.
func (fs *fleetSet) syncEndpoints(ctx context.Context, f *fleet) {
	fs.mu.Lock()
	infra, ips := f.infra, fs.addresses[f.gateway]
	fs.mu.Unlock()
	if !infra.Provisioned() {
		return // its Service is not there yet (retried with the Gateway)
	}
	err := fs.prov.SyncEndpoints(ctx, f.gateway, infra, ips)
	if err == nil || ctx.Err() != nil {
		return
	}
	fs.log.Warn("update the endpoints of a gateway's service; retrying", "gateway", f.gateway, "error", err, "in", gatewayRetry)
	fs.mu.Lock()
	f.infra = provision.Infra{}
	fs.mu.Unlock()
	fs.retry()
}

// publishAddresses tells the status writer whose addresses a Gateway gets: with
// per-Gateway pods, those its own pod discovery found (and none before it
// reported); otherwise (nil) the podSelector's pods'.
func (fs *fleetSet) publishAddresses() {
	if fs.status == nil {
		return
	}
	if !fs.perGateway {
		fs.status.SetGatewayAddresses(nil)
		return
	}
	fs.mu.Lock()
	all := maps.Clone(fs.addresses)
	fs.mu.Unlock()
	if all == nil {
		all = map[types.NamespacedName][]string{}
	}
	fs.status.SetGatewayAddresses(all)
}
