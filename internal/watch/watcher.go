package watch

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/fieldpath"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/store"
)

// DropUnchanged is the reason of an update dropped because nothing templates can see
// changed (status, resourceVersion, generation, managedFields, last-applied).
const DropUnchanged = "unchanged"

// Notify is called (debounced) when a resource's store changed; resource is "" for
// the first notification after every informer synced.
type Notify func(resource string)

// Watcher runs the informers of one config.
type Watcher struct {
	Dynamic  dynamic.Interface
	Metadata metadata.Interface
	Live     *store.Live
	Notify   Notify
	Log      *slog.Logger
	// Ignore are the paths stripped before objects are cached.
	Ignore []fieldpath.Path
	// OnEvent, if set, counts every informer event (resource, add|update|delete).
	OnEvent func(resource, kind string)
	// OnError, if set, reports an object that could not be admitted.
	OnError func(resource, key string, err error)
	// OnDropped, if set, counts events dropped before the debouncer, by reason
	// (DropUnchanged).
	OnDropped func(resource, reason string)
	// OnChange, if set, sees every change that reaches the debouncer, when it
	// arrives (a change's trace starts here).
	OnChange func(resource string)
	// Idle, if set, reports whether Notify's consumer is idle: a change then fires at
	// once even inside the debounce interval (Debouncer.Idle).
	Idle func() bool
	// Served, if set, says whether the API server serves a resource. One it does
	// not (its CRD missing, or of an older release without that version: Gateway
	// API v1.4 has no tlsroutes v1) gets no informer and its store stays empty,
	// so that the others sync and serve; an informer on it would never sync.
	// Unserved lists the skipped ones (the controller restarts the config's watch
	// when one appears).
	Served func(schema.GroupVersionResource) bool
	// OnUnserved, if set, is told about each skipped resource once, at Register.
	OnUnserved func(resource string, gvr schema.GroupVersionResource)

	mu         sync.Mutex
	synced     bool
	debounc    map[string]*Debouncer
	forget     map[string]func(key string) // on-demand caches, by resource
	consumers  []*Consumer
	unserved   map[string]schema.GroupVersionResource
	registered bool
}

// GVR resolves a watched resource's group, version and resource.
func GVR(w v1alpha1.WatchedResource) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(w.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("apiVersion %q: %w", w.APIVersion, err)
	}
	return gv.WithResource(w.Resources), nil
}

// Register asks set for every watched resource's informer and adds the handlers
// that feed the live store; set must not have started. Run then waits for them.
func (w *Watcher) Register(set *Informers) error {
	b := w.Live.Builder()
	w.debounc = map[string]*Debouncer{}
	w.forget = map[string]func(string){}
	w.consumers = nil
	w.unserved = map[string]schema.GroupVersionResource{}
	keepMF, keepLA := true, true
	for _, p := range w.Ignore {
		if p.Source == "metadata.managedFields" {
			keepMF = false
		}
		if slices.Equal(p.Steps, lastAppliedPath.Steps) {
			keepLA = false
		}
	}
	for _, name := range b.Names() {
		r, _ := b.Resource(name)
		gvr, err := GVR(r.Watch)
		if err != nil {
			return fmt.Errorf("watchedResources[%s]: %w", name, err)
		}
		sel, err := v1alpha1.ParseLabelSelector(r.Watch.LabelSelector)
		if err != nil {
			return fmt.Errorf("watchedResources[%s].labelSelector: %w", name, err)
		}
		name := name
		if w.Served != nil && !w.Served(gvr) {
			w.unserved[name] = gvr
			w.Log.Warn("watched resource not served by the API server: its store stays empty until it is",
				"resource", name, "gvr", gvr.String())
			if w.OnUnserved != nil {
				w.OnUnserved(name, gvr)
			}
			continue
		}
		w.debounc[name] = NewDebouncer(r.Watch.DebounceDuration(), func() { w.Notify(name) })
		w.debounc[name].Idle = w.Idle
		onDemand := r.Watch.Store == v1alpha1.StoreOnDemand
		if onDemand {
			od := newOnDemand(w.Dynamic.Resource(gvr), 256, func(raw map[string]any) (snapshot.Object, error) {
				o, _, err := b.Admit(name, raw)
				return o, err
			})
			w.Live.SetOnDemand(name, od)
			w.forget[name] = od.Forget
		}
		keepStatus := w.Live.KeepsStatus(name)
		c := set.Need(Need{GVR: gvr, Metadata: onDemand, LabelSelector: labels.SelectorFromSet(sel).String(),
			Reduce: w.reducer(keepStatus), KeepsManagedFields: keepMF, KeepsLastApplied: keepLA, DropsStatus: !keepStatus})
		c.AddEventHandler(w.handler(name))
		w.consumers = append(w.consumers, c)
	}
	w.registered = true
	return nil
}

// Unserved returns the watched resources Register skipped because the API server
// does not serve them, by name.
func (w *Watcher) Unserved() map[string]schema.GroupVersionResource {
	out := make(map[string]schema.GroupVersionResource, len(w.unserved))
	for k, v := range w.unserved {
		out[k] = v
	}
	return out
}

// Run waits until every informer has synced, sends the first notification and then
// blocks until ctx ends. Without Register, it runs informers of its own.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.registered {
		set := NewInformers(w.Dynamic, w.Metadata)
		if err := w.Register(set); err != nil {
			return err
		}
		if err := set.Start(ctx); err != nil {
			return err
		}
	}
	for _, d := range w.debounc {
		defer d.Stop()
	}
	syncs := make([]cache.InformerSynced, 0, len(w.consumers))
	for _, c := range w.consumers {
		syncs = append(syncs, c.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		return fmt.Errorf("informers did not sync: %w", ctx.Err())
	}
	w.mu.Lock()
	w.synced = true
	w.mu.Unlock()
	w.Log.Info("watched resources synced", "resources", strings.Join(w.Live.Builder().Names(), ","))
	w.Notify("")
	<-ctx.Done()
	return nil
}

// reducer removes ignored fields, and status unless templates read it, leaving the
// object it is given untouched (an informer shared with status keeps them).
func (w *Watcher) reducer(keepStatus bool) func(any) any {
	return func(obj any) any {
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			m := o.Object
			for _, p := range w.Ignore {
				m = p.Without(m)
			}
			if _, ok := m["status"]; ok && !keepStatus {
				m = statusPath.Without(m)
			}
			if len(m) == len(o.Object) && sameMap(m, o.Object) {
				return obj
			}
			return &unstructured.Unstructured{Object: m}
		case *metav1.PartialObjectMetadata:
			_, lastApplied := o.Annotations[lastAppliedAnnotation]
			if o.ManagedFields == nil && !lastApplied {
				return obj
			}
			cp := *o
			cp.ManagedFields = nil
			if lastApplied {
				cp.Annotations = make(map[string]string, len(o.Annotations))
				for k, v := range o.Annotations {
					if k != lastAppliedAnnotation {
						cp.Annotations[k] = v
					}
				}
			}
			return &cp
		}
		return obj
	}
}

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

var (
	statusPath      = fieldpath.MustParse("status")
	lastAppliedPath = fieldpath.MustParse(`metadata.annotations["` + lastAppliedAnnotation + `"]`)
)

// sameMap reports whether a and b are the same map (Without returns its argument
// when there is nothing to remove).
func sameMap(a, b map[string]any) bool {
	return fmt.Sprintf("%p", a) == fmt.Sprintf("%p", b)
}

func (w *Watcher) handler(resource string) cache.ResourceEventHandler {
	put := func(obj any, kind string) {
		raw, ok := rawOf(obj)
		if !ok {
			return
		}
		if w.OnEvent != nil {
			w.OnEvent(resource, kind)
		}
		if f := w.forget[resource]; f != nil {
			f(fieldpath.ObjectKey(raw))
		}
		outcome, err := w.Live.Update(resource, raw)
		if err != nil {
			if w.OnError != nil {
				w.OnError(resource, fieldpath.ObjectKey(raw), err)
			}
			w.Log.Warn("object not admitted", "resource", resource, "object", fieldpath.ObjectKey(raw), "error", err)
			return
		}
		switch outcome {
		case store.Stored, store.Removed:
			w.trigger(resource)
		case store.Unchanged:
			if w.OnDropped != nil {
				w.OnDropped(resource, DropUnchanged)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { put(obj, "add") },
		UpdateFunc: func(old, obj any) {
			if o, n := metaOf(old), metaOf(obj); o != nil && n != nil && o.GetResourceVersion() == n.GetResourceVersion() {
				return // resync: nothing changed
			}
			put(obj, "update")
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			m := metaOf(obj)
			if m == nil {
				return
			}
			if w.OnEvent != nil {
				w.OnEvent(resource, "delete")
			}
			key := m.GetName()
			if m.GetNamespace() != "" {
				key = m.GetNamespace() + "/" + key
			}
			if f := w.forget[resource]; f != nil {
				f(key)
			}
			if w.Live.Delete(resource, key) {
				w.trigger(resource)
			}
		},
	}
}

// trigger forwards a change to the resource's debouncer once the initial sync is done;
// before that, the first notification after sync covers everything.
func (w *Watcher) trigger(resource string) {
	w.mu.Lock()
	synced := w.synced
	w.mu.Unlock()
	if synced {
		if w.OnChange != nil {
			w.OnChange(resource)
		}
		w.debounc[resource].Trigger()
	}
}

func metaOf(obj any) metav1.Object {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o
	case *metav1.PartialObjectMetadata:
		return o
	}
	return nil
}

// rawOf returns the object as decoded JSON. Metadata-only objects (on-demand stores)
// become {apiVersion, kind, metadata}.
func rawOf(obj any) (map[string]any, bool) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o.Object, true
	case *metav1.PartialObjectMetadata:
		u, err := partialToRaw(o)
		return u, err == nil
	}
	return nil, false
}
