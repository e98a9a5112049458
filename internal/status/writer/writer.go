package writer

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haproxy-haptic/haptic/internal/note"
	"github.com/haproxy-haptic/haptic/internal/status"
	"github.com/haproxy-haptic/haptic/internal/watch"
)

// Options configure a Manager.
type Options struct {
	Dynamic  dynamic.Interface
	Metadata metadata.Interface
	// Discovery tells which Gateway API resources are served (nil: assume all).
	Discovery      discovery.DiscoveryInterface
	ControllerName gwv1.GatewayController // default status.ControllerName
	// Workers bounds concurrent writes (default 8).
	Workers int
	// Debounce collects changes before a recompute (default 100ms).
	Debounce time.Duration
	Log      *slog.Logger
	// OnWrite is called after each successful status write, with the kind (from
	// several workers at once).
	OnWrite func(kind string)
	// SharedInformers: the caller passes the informers to read (Register, Use) —
	// the controller's, shared with its other stages; without it Run starts its own.
	SharedInformers bool
	// BeforePass, if set, is called before each status pass and may block (the
	// controller holds passes while a change is being delivered to the pods);
	// AfterPass after it.
	BeforePass func(context.Context)
	AfterPass  func()
	// OnGateways is called when the set of Gateways of the controller's classes (or
	// a generation) changes, with the new set.
	OnGateways func(map[types.NamespacedName]int64)
}

// Manager keeps statuses up to date. Create it with New and start it with Run.
type Manager struct {
	opts    Options
	trigger chan struct{}
	src     atomic.Pointer[Source]
	typed   typedCache
	writes  atomic.Int64

	mu           sync.Mutex
	addresses    []string
	addrsKnown   bool                              // SetAddresses was called: no pass before (it would clear every address)
	programmed   map[types.NamespacedName]Revision // Gateway → the object and generation live on one of its pods
	perGateway   bool                              // Gateways have pods of their own: gwAddresses only
	gwAddresses  map[types.NamespacedName][]string
	notes        map[string][]note.Note // per render (fleet): what its templates noted
	controller   gwv1.GatewayController // the GatewayClass controllerName served
	features     []string               // what the libraries claim: every served GatewayClass's supportedFeatures
	ingressClass string
	bundle       string // the Gateway API CRDs' bundle-version
	written      map[types.UID]written
	settled      settledIngresses
}

// settledIngresses are the Ingresses a pass found needing no write (not ours, or
// their status already says what it should), by resourceVersion, for one class and
// set of addresses: a pass skips them until they change, so that it costs the
// Ingresses that changed, not all of them.
type settledIngresses struct {
	key string
	rv  map[types.UID]string
}

// written remembers an object as our last write returned it, until the informer
// catches up: a recompute in between must not see the old status and write again.
type written struct {
	// superseded are the resourceVersions our writes replaced since the informer last
	// caught up: it may still show any of them (a write on top of our own earlier
	// write, the informer still holding what that one replaced).
	superseded []string
	obj        *unstructured.Unstructured
}

// New returns a Manager.
func New(opts Options) *Manager {
	if opts.ControllerName == "" {
		opts.ControllerName = status.ControllerName
	}
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 100 * time.Millisecond
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Manager{opts: opts, trigger: make(chan struct{}, 1), typed: typedCache{m: map[types.UID]typedEntry{}},
		programmed: map[types.NamespacedName]Revision{}, ingressClass: status.DefaultIngressClass, written: map[types.UID]written{},
		controller: opts.ControllerName}
}

// Trigger asks for a recompute.
func (m *Manager) Trigger() {
	select {
	case m.trigger <- struct{}{}:
	default:
	}
}

// SetAddresses sets the data plane's addresses (HAProxy pod IPs). Nothing is
// written before the first call: a controller that just started does not know them
// yet and must not clear the addresses the statuses already carry.
func (m *Manager) SetAddresses(addrs []string) {
	a := append([]string(nil), addrs...)
	sort.Strings(a)
	m.mu.Lock()
	changed := fmt.Sprint(a) != fmt.Sprint(m.addresses) || !m.addrsKnown
	m.addresses, m.addrsKnown = a, true
	m.mu.Unlock()
	if changed {
		m.Trigger()
	}
}

// Revision is one version of a Gateway: the object (UID; empty: whichever object
// has the name) and its generation.
type Revision struct {
	UID        types.UID
	Generation int64
}

// SetProgrammed sets the Gateways (with the generation) whose configuration is live
// on at least one HAProxy pod, whichever object of that name it was rendered from.
func (m *Manager) SetProgrammed(p map[types.NamespacedName]int64) {
	r := make(map[types.NamespacedName]Revision, len(p))
	for k, gen := range p {
		r[k] = Revision{Generation: gen}
	}
	m.SetProgrammedRevisions(r)
}

// SetProgrammedRevisions sets the Gateways whose configuration is live on at least
// one of their HAProxy pods, with the revision it was rendered from: a Gateway is
// Programmed while that is its current object (a Gateway deleted and created again
// under the same name is not) at its current generation or a newer one.
func (m *Manager) SetProgrammedRevisions(p map[types.NamespacedName]Revision) {
	m.mu.Lock()
	changed := fmt.Sprint(p) != fmt.Sprint(m.programmed)
	m.programmed = p
	m.mu.Unlock()
	if changed {
		m.Trigger()
	}
}

// SetNotes records the notes of one rendering (a fleet): render.Result.Notes, what
// its templates said about the objects (a Gateway listener left out because its port
// is taken); empty forgets them (a fleet that is gone).
func (m *Manager) SetNotes(render string, notes []note.Note) {
	m.mu.Lock()
	if m.notes == nil {
		m.notes = map[string][]note.Note{}
	}
	changed := !slices.Equal(notes, m.notes[render])
	if len(notes) == 0 {
		delete(m.notes, render)
	} else {
		m.notes[render] = slices.Clone(notes)
	}
	m.mu.Unlock()
	if changed {
		m.Trigger()
	}
}

// SetGatewayAddresses sets the addresses of Gateways that have pods of their own
// (per-Gateway provisioning): a Gateway's addresses are then its entry only, and one
// without an entry (its pods not discovered yet) keeps the addresses its status has —
// none for a new Gateway, never the data plane's (SetAddresses). nil: Gateways share
// the data plane and its addresses (Shared provisioning, the default).
func (m *Manager) SetGatewayAddresses(addrs map[types.NamespacedName][]string) {
	m.mu.Lock()
	changed := fmt.Sprint(addrs) != fmt.Sprint(m.gwAddresses) || (addrs != nil) != m.perGateway
	m.gwAddresses, m.perGateway = addrs, addrs != nil
	m.mu.Unlock()
	if changed {
		m.Trigger()
	}
}

// SetConfig passes what the HAProxyTemplateConfig says about status: the
// IngressClass in its extraContext (extraContext.ingressClass), the
// GatewayClass controllerName whose classes are served and the Gateway API
// features the libraries claim (spec.gateways.supportedFeatures).
func (m *Manager) SetConfig(extraContext []byte, controller gwv1.GatewayController, features []string) {
	m.SetIngressClass(status.IngressClassOf(extraContext))
	m.SetControllerName(controller)
	m.setSupportedFeatures(features)
}

func (m *Manager) setSupportedFeatures(features []string) {
	m.mu.Lock()
	changed := !slices.Equal(features, m.features)
	m.features = slices.Clone(features)
	m.mu.Unlock()
	if changed {
		m.Trigger()
	}
}

// SetControllerName sets the GatewayClass controllerName whose classes are served.
func (m *Manager) SetControllerName(name gwv1.GatewayController) {
	if name == "" {
		name = status.ControllerName
	}
	m.mu.Lock()
	changed := name != m.controller
	m.controller = name
	m.mu.Unlock()
	if changed {
		m.Trigger()
	}
}

func (m *Manager) controllerName() gwv1.GatewayController {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.controller
}

// SetIngressClass sets the IngressClass whose Ingresses get the data plane's addresses.
func (m *Manager) SetIngressClass(name string) {
	if name == "" {
		name = status.DefaultIngressClass
	}
	m.mu.Lock()
	changed := name != m.ingressClass
	m.ingressClass = name
	m.mu.Unlock()
	if changed {
		m.Trigger()
	}
}

// Gateways returns the Gateways of our classes and their generations as the
// Manager currently sees them.
func (m *Manager) Gateways() map[types.NamespacedName]int64 {
	out := map[types.NamespacedName]int64{}
	for k, r := range m.GatewayRevisions() {
		out[k] = r.Generation
	}
	return out
}

// GatewayRevisions returns the Gateways of our classes (object and generation) as
// the Manager currently sees them (for the caller to record what a rendered
// configuration contained).
func (m *Manager) GatewayRevisions() map[types.NamespacedName]Revision {
	out := map[types.NamespacedName]Revision{}
	src := m.src.Load()
	if src == nil {
		return out
	}
	ours := map[string]bool{}
	for _, o := range src.list(GatewayClasses) {
		u := o.(*unstructured.Unstructured)
		if ctrl, _, _ := unstructured.NestedString(u.Object, "spec", "controllerName"); ctrl == string(m.controllerName()) {
			ours[u.GetName()] = true
		}
	}
	for _, o := range src.list(Gateways) {
		u := o.(*unstructured.Unstructured)
		if cls, _, _ := unstructured.NestedString(u.Object, "spec", "gatewayClassName"); ours[cls] {
			out[types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}] = Revision{UID: u.GetUID(), Generation: u.GetGeneration()}
		}
	}
	return out
}

// Gateway returns a Gateway as the Manager's cache has it (false: not seen, or not
// a Gateway).
func (m *Manager) Gateway(nn types.NamespacedName) (*gwv1.Gateway, bool) {
	src := m.src.Load()
	if src == nil {
		return nil, false
	}
	c, ok := src.consumers[Gateways]
	if !ok {
		return nil, false
	}
	o, exists := c.GetByKey(nn.Namespace + "/" + nn.Name)
	if !exists {
		return nil, false
	}
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil, false
	}
	var gw gwv1.Gateway
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &gw); err != nil {
		return nil, false
	}
	return &gw, true
}

// ListenerSetsOf returns the ListenerSets attached to a Gateway (admitted by its
// spec.allowedListeners), in order of precedence, as the Manager's cache has them.
func (m *Manager) ListenerSetsOf(gw *gwv1.Gateway) []*gwv1.ListenerSet {
	src := m.src.Load()
	if src == nil {
		return nil
	}
	var sets []*gwv1.ListenerSet
	for _, o := range src.list(ListenerSets) {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		var ls gwv1.ListenerSet
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ls); err == nil {
			sets = append(sets, &ls)
		}
	}
	if len(sets) == 0 {
		return nil
	}
	namespaces := map[string]map[string]string{}
	for _, o := range src.list(Namespaces) {
		if a, ok := o.(metav1.Object); ok {
			namespaces[a.GetName()] = a.GetLabels()
		}
	}
	return status.AttachedListenerSets(gw, sets, namespaces)
}

// listenerSetPorts lists, per Gateway, the ports of its attached ListenerSets.
func (m *Manager) listenerSetPorts(gws map[types.NamespacedName]int64) map[types.NamespacedName][]int32 {
	out := map[types.NamespacedName][]int32{}
	for nn := range gws {
		gw, ok := m.Gateway(nn)
		if !ok {
			continue
		}
		for _, ls := range m.ListenerSetsOf(gw) {
			for _, l := range ls.Spec.Listeners {
				out[nn] = append(out[nn], int32(l.Port))
			}
		}
	}
	return out
}

// Writes is the number of successful status writes so far.
func (m *Manager) Writes() int64 { return m.writes.Load() }

// passPacing bounds how often status passes run, in units of the last pass's length:
// at most a tenth of a core.
const passPacing = 10

// Run writes until ctx ends. Without Options.SharedInformers it watches what it
// reads with informers of its own; with it, it waits for the caller's Use.
func (m *Manager) Run(ctx context.Context) error {
	m.readBundleVersion(ctx)
	if !m.opts.SharedInformers {
		set := watch.NewInformers(m.opts.Dynamic, m.opts.Metadata)
		src := m.Register(set)
		if err := set.Start(ctx); err != nil {
			return err
		}
		m.Use(ctx, src)
	}
	lastGateways := ""
	wait := m.opts.Debounce
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-m.trigger:
		}
		select { // collect a burst of changes into one pass
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		select {
		case <-m.trigger:
		default:
		}
		if !m.Synced() {
			continue // the source's sync triggers again
		}
		if m.opts.BeforePass != nil {
			m.opts.BeforePass(ctx)
			select { // what arrived while holding is in this pass
			case <-m.trigger:
			default:
			}
		}
		_, planned, err := m.pass(ctx)
		if err != nil {
			m.opts.Log.Warn("status pass", "error", err)
		}
		// A pass recomputes every object's status: under steady churn at scale,
		// passes come no closer than passPacing times that computation, so that they
		// take at most a tenth of a core from rendering and delivery and batch more
		// changes each. The writes are not counted: they wait on the client's rate
		// limiter and the API server, not on the cores, and counting them held every
		// status back by seconds at 3,000 routes.
		wait = max(m.opts.Debounce, passPacing*planned)
		if m.opts.AfterPass != nil {
			m.opts.AfterPass()
		}
		if m.opts.OnGateways != nil {
			// The ListenerSets attached to them are part of what is provisioned
			// (their ports): a change there syncs the fleets too.
			gws := m.Gateways()
			if seen := fmt.Sprint(gws, m.listenerSetPorts(gws)); seen != lastGateways {
				lastGateways = seen
				m.opts.OnGateways(gws)
			}
		}
	}
}

// Synced reports whether the informers of the source in use have synced.
func (m *Manager) Synced() bool {
	src := m.src.Load()
	return src != nil && src.synced()
}

// job is one status write.
type job struct {
	gvr    schema.GroupVersionResource
	kind   string
	obj    *unstructured.Unstructured // the current object
	status any
}

// Pass recomputes every status once and writes those that changed; it returns the
// number of writes.
func (m *Manager) Pass(ctx context.Context) (int, error) {
	n, _, err := m.pass(ctx)
	return n, err
}

// pass is Pass, also returning how long the statuses took to compute.
func (m *Manager) pass(ctx context.Context) (int, time.Duration, error) {
	start := time.Now()
	jobs, err := m.plan()
	planned := time.Since(start)
	if err != nil {
		return 0, planned, err
	}
	if len(jobs) == 0 {
		return 0, planned, nil
	}
	work := make(chan job)
	var wg sync.WaitGroup
	var n atomic.Int64
	var firstErr error
	var errMu sync.Mutex
	for range min(m.opts.Workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				if err := m.write(ctx, j); err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					continue
				}
				n.Add(1)
			}
		}()
	}
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	return int(n.Load()), planned, firstErr
}

func (m *Manager) write(ctx context.Context, j job) error {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(j.status)
	if err != nil {
		return err
	}
	obj := j.obj.DeepCopy()
	obj.Object["status"] = raw
	var client dynamic.ResourceInterface = m.opts.Dynamic.Resource(j.gvr)
	if ns := obj.GetNamespace(); ns != "" {
		client = m.opts.Dynamic.Resource(j.gvr).Namespace(ns)
	}
	out, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			m.Trigger() // the informer brings the newer object; the next pass redoes it
			return nil
		}
		return fmt.Errorf("update %s %s/%s status: %w", j.kind, obj.GetNamespace(), obj.GetName(), err)
	}
	out.SetManagedFields(nil)
	m.remember(j.obj, out)
	m.writes.Add(1)
	if m.opts.OnWrite != nil {
		m.opts.OnWrite(j.kind)
	}
	return nil
}

// remember records out, our write of base, until the informer catches up (current).
func (m *Manager) remember(base, out *unstructured.Unstructured) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := written{superseded: []string{base.GetResourceVersion()}, obj: out}
	if prev, ok := m.written[out.GetUID()]; ok && prev.obj.GetResourceVersion() == base.GetResourceVersion() {
		w.superseded = append(slices.Clone(prev.superseded), w.superseded...)
	}
	m.written[out.GetUID()] = w
}

// current returns the freshest known version of a cached object: our last write's
// result while the informer has not caught up with it.
func (m *Manager) current(o any) *unstructured.Unstructured {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if w, ok := m.written[u.GetUID()]; ok {
		if slices.Contains(w.superseded, u.GetResourceVersion()) {
			return w.obj
		}
		delete(m.written, u.GetUID())
	}
	return u
}

// objects are src's objects of gvr, typed. A pass reads one source throughout: the
// Manager's may be replaced (or forgotten, at shutdown) during it.
func objects[T any](m *Manager, src *Source, gvr schema.GroupVersionResource, seen map[types.UID]bool, raw map[types.UID]*unstructured.Unstructured) ([]*T, error) {
	var out []*T
	for _, o := range src.list(gvr) {
		u := m.current(o)
		if u == nil {
			continue
		}
		t, err := convert[T](&m.typed, u, seen)
		if err != nil {
			return nil, fmt.Errorf("decode %s %s/%s: %w", gvr.Resource, u.GetNamespace(), u.GetName(), err)
		}
		if raw != nil {
			raw[u.GetUID()] = u
		}
		out = append(out, t)
	}
	return out, nil
}

// CRDs is the CustomResourceDefinition resource; the Gateway CRD's
// gateway.networking.k8s.io/bundle-version annotation says which Gateway API
// release is installed.
var CRDs = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// readBundleVersion reads the installed Gateway API release once; without it (no
// CRD, no permission) GatewayClasses get no SupportedVersion condition.
func (m *Manager) readBundleVersion(ctx context.Context) {
	crd, err := m.opts.Dynamic.Resource(CRDs).Get(ctx, "gateways.gateway.networking.k8s.io", metav1.GetOptions{})
	if err != nil {
		m.opts.Log.Debug("Gateway API bundle version unknown", "error", err)
		return
	}
	m.mu.Lock()
	m.bundle = crd.GetAnnotations()["gateway.networking.k8s.io/bundle-version"]
	m.mu.Unlock()
}
