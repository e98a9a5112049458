package watch

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
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

	mu      sync.Mutex
	synced  bool
	debounc map[string]*Debouncer
	forget  map[string]func(key string) // on-demand caches, by resource
}

// GVR resolves a watched resource's group, version and resource.
func GVR(w v1alpha1.WatchedResource) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(w.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("apiVersion %q: %w", w.APIVersion, err)
	}
	return gv.WithResource(w.Resources), nil
}

// Run starts every informer, waits until all have synced, sends the first
// notification and then blocks until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	b := w.Live.Builder()
	w.debounc = map[string]*Debouncer{}
	w.forget = map[string]func(string){}
	var syncs []cache.InformerSynced
	var informers []cache.SharedIndexInformer
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
		selector := labels.SelectorFromSet(sel).String()
		name := name
		d := NewDebouncer(r.Watch.DebounceDuration(), func() { w.Notify(name) })
		w.debounc[name] = d
		defer d.Stop()
		var inf cache.SharedIndexInformer
		if r.Watch.Store == v1alpha1.StoreOnDemand {
			f := metadatainformer.NewFilteredSharedInformerFactory(w.Metadata, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) { o.LabelSelector = selector })
			inf = f.ForResource(gvr).Informer()
			od := newOnDemand(w.Dynamic.Resource(gvr), 256, func(raw map[string]any) (snapshot.Object, error) {
				o, _, err := b.Admit(name, raw)
				return o, err
			})
			w.Live.SetOnDemand(name, od)
			w.forget[name] = od.Forget
		} else {
			f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.Dynamic, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) { o.LabelSelector = selector })
			inf = f.ForResource(gvr).Informer()
		}
		keepStatus := w.Live.KeepsStatus(name)
		if err := inf.SetTransform(func(obj any) (any, error) { return w.strip(obj, keepStatus) }); err != nil {
			return fmt.Errorf("watchedResources[%s]: %w", name, err)
		}
		if _, err := inf.AddEventHandler(w.handler(name)); err != nil {
			return fmt.Errorf("watchedResources[%s]: %w", name, err)
		}
		informers = append(informers, inf)
		syncs = append(syncs, inf.HasSynced)
	}
	// Start only once every handler's maps are complete: handlers read them.
	for _, inf := range informers {
		go inf.Run(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		return fmt.Errorf("informers did not sync: %w", ctx.Err())
	}
	w.mu.Lock()
	w.synced = true
	w.mu.Unlock()
	w.Log.Info("watched resources synced", "resources", strings.Join(b.Names(), ","))
	w.Notify("")
	<-ctx.Done()
	return nil
}

// strip removes ignored fields, and status unless templates read it, before the
// informer caches an object; only here may the object be modified.
func (w *Watcher) strip(obj any, keepStatus bool) (any, error) {
	var m map[string]any
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		m = o.Object
	case *metav1.PartialObjectMetadata:
		o.ManagedFields = nil
		delete(o.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
		return o, nil
	default:
		return obj, nil
	}
	for _, p := range w.Ignore {
		p.Delete(m)
	}
	if !keepStatus {
		delete(m, "status")
	}
	return obj, nil
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
