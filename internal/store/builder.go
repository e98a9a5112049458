package store

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/fieldpath"
	"github.com/haproxy-haptic/haptic/internal/schema"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// Resource is one watched resource, resolved.
type Resource struct {
	Name     string
	Watch    v1alpha1.WatchedResource
	IndexBy  []fieldpath.Path
	Selector *fieldpath.Selector
	// Type is the schema type, nil when the resource has none or access is untyped.
	Type *schema.Type
}

// Builder admits objects of a config's watched resources.
type Builder struct {
	resources map[string]*Resource
	ignore    []fieldpath.Path
	// Prepare, when set, is called with every object admitted for templates (with its
	// resource's apiVersion and plural): the renderer makes the compact forms its
	// helpers read here, while the object's maps are fresh in the cache, instead of
	// during the first render that reads them.
	Prepare func(apiVersion, resources string, obj snapshot.Object)
}

// NewBuilder resolves every watched resource of a validated spec against the schema
// registry (nil registry or untyped access: no typed values).
func NewBuilder(spec *v1alpha1.HAProxyTemplateConfigSpec, reg *schema.Registry) (*Builder, error) {
	b := &Builder{resources: map[string]*Resource{}}
	for _, p := range spec.WatchedResourcesIgnoreFields {
		path, err := fieldpath.Parse(p)
		if err != nil {
			return nil, fmt.Errorf("spec.watchedResourcesIgnoreFields: %w", err)
		}
		b.ignore = append(b.ignore, path)
	}
	typed := spec.TemplatingSettings.ResourceAccess != v1alpha1.AccessUntyped && reg != nil
	for name, w := range spec.WatchedResources {
		r := &Resource{Name: name, Watch: w}
		for _, ix := range w.IndexBy {
			p, err := fieldpath.Parse(ix)
			if err != nil {
				return nil, fmt.Errorf("spec.watchedResources[%s].indexBy: %w", name, err)
			}
			r.IndexBy = append(r.IndexBy, p)
		}
		sel, err := fieldpath.ParseSelector(w.FieldSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.watchedResources[%s].fieldSelector: %w", name, err)
		}
		r.Selector = sel
		if typed {
			if t, ok := reg.ForResource(w.APIVersion, w.Resources); ok {
				r.Type = t
			}
		}
		b.resources[name] = r
	}
	return b, nil
}

// Resource returns a watched resource by name.
func (b *Builder) Resource(name string) (*Resource, bool) {
	r, ok := b.resources[name]
	return r, ok
}

// Names returns the watched resource names, sorted.
func (b *Builder) Names() []string {
	out := make([]string, 0, len(b.resources))
	for n := range b.resources {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Types returns each resource's struct type (nil without a schema), for render.Options.
func (b *Builder) Types() map[string]reflect.Type {
	out := make(map[string]reflect.Type, len(b.resources))
	for n, r := range b.resources {
		if r.Type != nil {
			out[n] = r.Type.Go
		} else {
			out[n] = nil
		}
	}
	return out
}

// Admit prepares one object for a store. It returns ok=false when the field selector
// rejects the object. raw is modified in place (ignored fields are removed).
func (b *Builder) Admit(resource string, raw map[string]any) (obj snapshot.Object, ok bool, err error) {
	r, found := b.resources[resource]
	if !found {
		return snapshot.Object{}, false, fmt.Errorf("no watched resource named %q", resource)
	}
	for _, p := range b.ignore {
		p.Delete(raw)
	}
	if !r.Selector.Matches(raw) {
		return snapshot.Object{}, false, nil
	}
	obj = snapshot.Object{
		Namespace: fieldpath.Namespace.GetString(raw),
		Name:      fieldpath.Name.GetString(raw),
		Raw:       raw,
		Forms:     new(snapshot.Forms),
	}
	if obj.Refused = screen(r.Watch.Resources, raw); obj.Refused != "" {
		return obj, true, nil // kept aside by the store, reported, never rendered
	}
	if r.Type != nil {
		if err := r.Type.Check(raw); err != nil {
			return snapshot.Object{}, false, fmt.Errorf("%s %s: %w", resource, obj.Key(), err)
		}
		obj.Convert = r.Type.Convert // (the value is made again when a template reads it)
	}
	if b.Prepare != nil {
		b.Prepare(r.Watch.APIVersion, r.Watch.Resources, obj)
	}
	return obj, true, nil
}

// NewStore builds the store of one resource from admitted objects.
func (b *Builder) NewStore(resource string, objs []snapshot.Object) *snapshot.Store {
	r := b.resources[resource]
	var typ reflect.Type
	if r.Type != nil {
		typ = r.Type.Go
	}
	return snapshot.NewStore(resource, r.IndexBy, typ, objs)
}

// Snapshot admits raw objects per resource and builds a snapshot; every watched
// resource gets a store, empty when no objects are given.
func (b *Builder) Snapshot(raw map[string][]map[string]any) (*snapshot.Snapshot, error) {
	snap := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{}}
	for res := range raw {
		if _, ok := b.resources[res]; !ok {
			return nil, fmt.Errorf("objects given for %q, which is not a watched resource", res)
		}
	}
	for _, name := range b.Names() {
		var objs []snapshot.Object
		for _, r := range raw[name] {
			o, ok, err := b.Admit(name, r)
			if err != nil {
				return nil, err
			}
			if ok {
				objs = append(objs, o)
			}
		}
		snap.Stores[name] = b.NewStore(name, objs)
	}
	return snap, nil
}
