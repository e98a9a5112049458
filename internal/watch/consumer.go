package watch

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Consumer is one consumer's view of its resource's informer: the objects its Need
// selects, reduced as it asked.
type Consumer struct {
	set      *Informers
	need     Need
	labels   labels.Selector // nil: the informer selects already
	fields   fields.Selector // nil: the informer selects already
	meta     bool            // reduce full objects to metadata
	reduce   func(any) any   // applied on read (shared informers)
	handlers []cache.ResourceEventHandler
	regs     []cache.ResourceEventHandlerRegistration
	src      *shared
}

// AddEventHandler adds a handler that sees the consumer's view; before Start.
func (c *Consumer) AddEventHandler(h cache.ResourceEventHandler) {
	c.handlers = append(c.handlers, h)
}

// HasSynced reports whether the consumer's handlers (or, without any, its
// informer) have seen the initial list.
func (c *Consumer) HasSynced() bool {
	if c.src == nil {
		return false
	}
	for _, r := range c.regs {
		if r == nil {
			if !c.src.inf.HasSynced() {
				return false
			}
			continue
		}
		if !r.HasSynced() {
			return false
		}
	}
	return true
}

// List returns the consumer's view of every cached object.
func (c *Consumer) List() []any {
	if c.src == nil {
		return nil
	}
	var out []any
	for _, o := range c.src.inf.GetStore().List() {
		if v, ok := c.view(o); ok {
			out = append(out, v)
		}
	}
	return out
}

// GetByKey returns the consumer's view of one object (namespace/name).
func (c *Consumer) GetByKey(key string) (any, bool) {
	if c.src == nil {
		return nil, false
	}
	o, exists, err := c.src.inf.GetStore().GetByKey(key)
	if err != nil || !exists {
		return nil, false
	}
	return c.view(o)
}

// view filters and reduces one cached object; false: not the consumer's.
func (c *Consumer) view(obj any) (any, bool) {
	if c.labels != nil || c.fields != nil {
		m, ok := obj.(metav1.Object)
		if !ok {
			return nil, false
		}
		if c.labels != nil && !c.labels.Matches(labels.Set(m.GetLabels())) {
			return nil, false
		}
		if c.fields != nil && !c.fields.Matches(objectFields(obj)) {
			return nil, false
		}
	}
	if c.meta {
		obj = metadataOnly(obj)
	}
	if c.reduce != nil {
		obj = c.reduce(obj)
	}
	return obj, true
}

// wrap turns the informer's events into the consumer's: objects its selectors do
// not select are not its own (an update that moves one in or out is an add or a
// delete), and each is reduced.
func (c *Consumer) wrap(h cache.ResourceEventHandler) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if v, ok := c.view(obj); ok {
				h.OnAdd(v, initial)
			}
		},
		UpdateFunc: func(old, obj any) {
			ov, oldOK := c.view(old)
			nv, newOK := c.view(obj)
			switch {
			case oldOK && newOK:
				h.OnUpdate(ov, nv)
			case newOK:
				h.OnAdd(nv, false)
			case oldOK:
				h.OnDelete(ov)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				if v, ok := c.view(t.Obj); ok {
					h.OnDelete(cache.DeletedFinalStateUnknown{Key: t.Key, Obj: v})
				}
				return
			}
			if v, ok := c.view(obj); ok {
				h.OnDelete(v)
			}
		},
	}
}

// dropServerKept is a shared informer's transform when none of its consumers reads
// managedFields (it drops them when managedFields), kubectl's last-applied
// annotation (when lastApplied: a copy of the whole object on every object kubectl
// applied), or the status (when status): what every consumer would otherwise reduce
// away on each read while the cache kept it. The object is freshly decoded: its own
// to change.
func dropServerKept(managedFields, lastApplied, status bool) func(any) any {
	return func(obj any) any {
		m, ok := obj.(metav1.Object)
		if !ok {
			return obj
		}
		if managedFields {
			m.SetManagedFields(nil)
		}
		if u, ok := obj.(*unstructured.Unstructured); ok && status {
			delete(u.Object, "status")
		}
		if !lastApplied {
			return obj
		}
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			if md, ok := o.Object["metadata"].(map[string]any); ok {
				if a, ok := md["annotations"].(map[string]any); ok {
					delete(a, lastAppliedAnnotation)
				}
			}
		case *metav1.PartialObjectMetadata:
			delete(o.Annotations, lastAppliedAnnotation)
		}
		return obj
	}
}

// metadataOnly reduces a whole object to apiVersion, kind and metadata (as a
// metadata-only informer has it), sharing the metadata with the cached object.
func metadataOnly(obj any) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj
	}
	out := map[string]any{}
	for _, k := range []string{"apiVersion", "kind", "metadata"} {
		if v, ok := u.Object[k]; ok {
			out[k] = v
		}
	}
	return &unstructured.Unstructured{Object: out}
}

// objectFields are the fields a field selector can test on a cached object:
// metadata.name, metadata.namespace and top-level string fields (a Secret's type).
func objectFields(obj any) fields.Set {
	set := fields.Set{}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		for k, v := range o.Object {
			if s, ok := v.(string); ok {
				set[k] = s
			}
		}
		set["metadata.name"], set["metadata.namespace"] = o.GetName(), o.GetNamespace()
	case metav1.Object:
		set["metadata.name"], set["metadata.namespace"] = o.GetName(), o.GetNamespace()
	}
	return set
}
