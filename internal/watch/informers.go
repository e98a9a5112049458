package watch

import (
	"context"
	"fmt"
	"sort"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

// Need is what one consumer (a watched resource's store, the status writer) asks of
// a resource's informer.
type Need struct {
	GVR schema.GroupVersionResource
	// Metadata: the objects' metadata is enough (an on-demand store, Namespaces'
	// labels for status).
	Metadata bool
	// LabelSelector and FieldSelector select objects (Kubernetes selector syntax;
	// "" selects all). The API server applies them when every consumer of the
	// resource asks the same; otherwise the informer lists everything and each
	// consumer's view filters.
	LabelSelector, FieldSelector string
	// Reduce reduces an object to what the consumer keeps (nil: the whole object).
	// It must not modify its argument and must accept its own output. A consumer
	// alone on its resource has it applied before objects are cached; a shared
	// informer caches whole objects and Reduce is applied to each read.
	Reduce func(obj any) any
	// Trim is a Reduce for memory alone: applied before objects are cached when the
	// consumer is alone on its resource, skipped on a shared informer, whose whole
	// object the consumer reads as it is (reducing every object on each read made
	// a copy of each, for nothing).
	Trim func(obj any) any
	// KeepsManagedFields: the consumer reads metadata.managedFields, which a shared
	// informer otherwise drops before caching.
	KeepsManagedFields bool
	// KeepsLastApplied: the consumer reads kubectl's last-applied-configuration
	// annotation (a copy of the whole object), which a shared informer otherwise
	// drops before caching.
	KeepsLastApplied bool
	// DropsStatus: the consumer never reads the objects' status. When every
	// consumer of a shared informer drops it, the informer drops it before caching
	// (each consumer's view would otherwise be a copy of every object without it).
	DropsStatus bool
}

// alone reduces an object as a consumer alone on its resource has it cached.
func (n Need) alone(obj any) any {
	if n.Trim != nil {
		obj = n.Trim(obj)
	}
	if n.Reduce != nil {
		obj = n.Reduce(obj)
	}
	return obj
}

// Informers is one set of informers that every consumer of one config reads —
// render's stores, status, provisioning: one informer per resource however many
// consumers need it. Consumers register with Need before Start.
type Informers struct {
	Dynamic  dynamic.Interface
	Metadata metadata.Interface
	// OnWatchError, when set before Start, is told each time a resource's list or
	// watch failed (a reset, an expired resourceVersion, the API server away —
	// every refused attempt to watch again counts): the informer lists and watches
	// again, with back-off (haptic_watch_restarts_total).
	OnWatchError func(resource string, err error)

	mu       sync.Mutex
	started  bool
	needs    map[schema.GroupVersionResource][]*Consumer
	byGVR    map[schema.GroupVersionResource]*shared
	launched map[schema.GroupVersionResource]int // informers started per resource
}

// shared is the one informer of a resource.
type shared struct {
	inf           cache.SharedIndexInformer
	in            *interner
	metadata      bool
	labelSelector string
	fieldSelector string
	consumers     int
}

// NewInformers returns an empty set.
func NewInformers(dyn dynamic.Interface, meta metadata.Interface) *Informers {
	return &Informers{Dynamic: dyn, Metadata: meta, needs: map[schema.GroupVersionResource][]*Consumer{},
		byGVR: map[schema.GroupVersionResource]*shared{}, launched: map[schema.GroupVersionResource]int{}}
}

// Need registers a consumer; it panics after Start (a programming error).
func (s *Informers) Need(n Need) *Consumer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		panic("watch.Informers: Need after Start")
	}
	c := &Consumer{set: s, need: n}
	s.needs[n.GVR] = append(s.needs[n.GVR], c)
	return c
}

// Start creates one informer per resource — as narrow as all its consumers allow —
// adds every handler and runs them until ctx ends.
func (s *Informers) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return fmt.Errorf("watch.Informers started twice")
	}
	s.started = true
	gvrs := make([]schema.GroupVersionResource, 0, len(s.needs))
	for gvr := range s.needs {
		gvrs = append(gvrs, gvr)
	}
	sort.Slice(gvrs, func(i, j int) bool { return gvrs[i].String() < gvrs[j].String() })
	var run []*shared
	for _, gvr := range gvrs {
		sh, err := s.build(gvr, s.needs[gvr])
		if err != nil {
			s.mu.Unlock()
			return err
		}
		s.byGVR[gvr] = sh
		s.launched[gvr]++
		run = append(run, sh)
	}
	s.mu.Unlock()
	for _, sh := range run {
		go sh.inf.Run(ctx.Done())
		go func() {
			// The initial list is where objects repeat each other; after it, a new
			// object is shared with the version it replaces, and the tables of
			// subtrees seen start again from nothing.
			if cache.WaitForCacheSync(ctx.Done(), sh.inf.HasSynced) {
				sh.in.forgetSeen()
			}
		}()
	}
	return nil
}

// Plan is how a resource's informer serves its consumers.
type Plan struct {
	Metadata                     bool // metadata-only informer
	LabelSelector, FieldSelector string
	// Shared: more than one consumer; whole objects are cached and each consumer's
	// Reduce runs on read.
	Shared bool
}

// PlanFor decides the informer of one resource from its consumers' needs: metadata
// only if none needs more, a server-side selector only if all ask the same.
func PlanFor(needs []Need) Plan {
	p := Plan{Metadata: true, Shared: len(needs) > 1}
	for i, n := range needs {
		p.Metadata = p.Metadata && n.Metadata
		if i == 0 {
			p.LabelSelector, p.FieldSelector = n.LabelSelector, n.FieldSelector
			continue
		}
		if n.LabelSelector != p.LabelSelector {
			p.LabelSelector = ""
		}
		if n.FieldSelector != p.FieldSelector {
			p.FieldSelector = ""
		}
	}
	return p
}

func (s *Informers) build(gvr schema.GroupVersionResource, consumers []*Consumer) (*shared, error) {
	needs := make([]Need, len(consumers))
	keepMF, keepLA, dropStatus := false, false, true
	for i, c := range consumers {
		needs[i] = c.need
		keepMF = keepMF || c.need.KeepsManagedFields
		keepLA = keepLA || c.need.KeepsLastApplied
		dropStatus = dropStatus && c.need.DropsStatus
	}
	plan := PlanFor(needs)
	tweak := func(o *metav1.ListOptions) {
		o.LabelSelector, o.FieldSelector = plan.LabelSelector, plan.FieldSelector
	}
	sh := &shared{metadata: plan.Metadata, labelSelector: plan.LabelSelector, fieldSelector: plan.FieldSelector, consumers: len(consumers)}
	var onRetry func(error)
	if onErr := s.OnWatchError; onErr != nil {
		onRetry = func(err error) { onErr(gvr.Resource, err) }
	}
	sh.inf = newInformer(s.Dynamic, s.Metadata, gvr, plan.Metadata, tweak, onRetry)
	if onErr := s.OnWatchError; onErr != nil {
		err := sh.inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
			onErr(gvr.Resource, err)
			cache.DefaultWatchErrorHandler(ctx, r, err) // logs; the reflector re-lists
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gvr.Resource, err)
		}
	}
	reduce := func(obj any) any { return obj }
	switch {
	case !plan.Shared && (consumers[0].need.Reduce != nil || consumers[0].need.Trim != nil):
		reduce = consumers[0].need.alone
	case plan.Shared && (!keepMF || !keepLA || dropStatus):
		reduce = dropServerKept(!keepMF, !keepLA, dropStatus)
	}
	in := newInterner(func(key string) any {
		obj, _, _ := sh.inf.GetIndexer().GetByKey(key)
		return obj
	})
	sh.in = in
	if err := sh.inf.SetTransform(func(obj any) (any, error) { return in.object(reduce(obj)), nil }); err != nil {
		return nil, fmt.Errorf("%s: %w", gvr.Resource, err)
	}
	for _, c := range consumers {
		c.src = sh
		if plan.LabelSelector != c.need.LabelSelector && c.need.LabelSelector != "" {
			sel, err := labels.Parse(c.need.LabelSelector)
			if err != nil {
				return nil, fmt.Errorf("%s: label selector: %w", gvr.Resource, err)
			}
			c.labels = sel
		}
		if plan.FieldSelector != c.need.FieldSelector && c.need.FieldSelector != "" {
			sel, err := fields.ParseSelector(c.need.FieldSelector)
			if err != nil {
				return nil, fmt.Errorf("%s: field selector: %w", gvr.Resource, err)
			}
			c.fields = sel
		}
		c.meta = c.need.Metadata && !plan.Metadata
		if plan.Shared {
			c.reduce = c.need.Reduce
		}
		for _, h := range c.handlers {
			reg, err := sh.inf.AddEventHandler(c.wrap(h))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", gvr.Resource, err)
			}
			c.regs = append(c.regs, reg)
		}
		if len(c.handlers) == 0 {
			c.regs = append(c.regs, nil) // HasSynced falls back to the informer's
		}
	}
	return sh, nil
}

// Started reports how many informers were started per resource.
func (s *Informers) Started() map[schema.GroupVersionResource]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[schema.GroupVersionResource]int, len(s.launched))
	for k, v := range s.launched {
		out[k] = v
	}
	return out
}

// Plans reports, per resource, how its informer was built and for how many consumers.
func (s *Informers) Plans() map[schema.GroupVersionResource]Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[schema.GroupVersionResource]Plan{}
	for gvr, sh := range s.byGVR {
		out[gvr] = Plan{Metadata: sh.metadata, LabelSelector: sh.labelSelector, FieldSelector: sh.fieldSelector, Shared: sh.consumers > 1}
	}
	return out
}
