package schema

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Type is the Go type built for one kind at one API version.
type Type struct {
	APIVersion string       // "v1", "networking.k8s.io/v1"
	Kind       string       // "Ingress"
	Resource   string       // lower-case plural: "ingresses"
	Go         reflect.Type // the struct type; Convert returns pointers to it

	codec *codec
}

// Convert turns a decoded object into a *T value, T being t.Go. Fields the schema
// does not know are dropped, absent and null fields keep their zero value (nil for
// objects, slices and maps). Free-form parts (map[string]any, any) share memory with
// obj. A value of the wrong JSON type fails with a *FieldError naming its path.
func (t *Type) Convert(obj map[string]any) (reflect.Value, error) {
	p := reflect.New(t.Go)
	if err := t.codec.decodeFields(p.Elem(), obj); err != nil {
		return reflect.Value{}, fmt.Errorf("convert %s %s: %w", t.APIVersion, t.Kind, finish(err))
	}
	return p, nil
}

// Check reports the error Convert would return for obj, without building the value:
// what a store checks at admission when the typed value is made later, if ever.
func (t *Type) Check(obj map[string]any) error {
	if err := t.codec.checkFields(obj); err != nil {
		return fmt.Errorf("convert %s %s: %w", t.APIVersion, t.Kind, finish(err))
	}
	return nil
}

// Registry maps API versions and kinds/resources to built types. Loading replaces
// earlier entries for the same apiVersion and kind, so a schema read from a live
// cluster or a schema directory overrides a bundled one. All methods are safe for
// concurrent use.
type Registry struct {
	mu         sync.RWMutex
	byKind     map[string]*Type // apiVersion + " " + kind
	byResource map[string]*Type // apiVersion + " " + resource
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byKind: map[string]*Type{}, byResource: map[string]*Type{}}
}

// ForResource returns the type for a resource (lower-case plural, e.g. "ingresses")
// served at apiVersion ("networking.k8s.io/v1", or "v1" for the core group).
func (r *Registry) ForResource(apiVersion, resource string) (*Type, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.byResource[apiVersion+" "+resource]
	return t, ok
}

// ForKind returns the type for a kind (e.g. "Ingress") at apiVersion.
func (r *Registry) ForKind(apiVersion, kind string) (*Type, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.byKind[apiVersion+" "+kind]
	return t, ok
}

// Types lists every registered type, sorted by apiVersion then kind.
func (r *Registry) Types() []*Type {
	r.mu.RLock()
	out := make([]*Type, 0, len(r.byKind))
	for _, t := range r.byKind {
		out = append(out, t)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].APIVersion != out[j].APIVersion {
			return out[i].APIVersion < out[j].APIVersion
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// LoadDir loads every *.json, *.yaml and *.yml file directly inside dir, in name order.
func (r *Registry) LoadDir(dir string) error {
	if err := r.loadFS(os.DirFS(dir), "."); err != nil {
		return fmt.Errorf("load schema dir %s: %w", dir, err)
	}
	return nil
}

func (r *Registry) loadFS(fsys fs.FS, dir string) error {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return fmt.Errorf("read dir: %w", err)
	}
	for _, e := range entries { // fs.ReadDir sorts by name
		if e.IsDir() {
			continue
		}
		switch strings.ToLower(path.Ext(e.Name())) {
		case ".json", ".yaml", ".yml":
		default:
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("read %s: %w", e.Name(), err)
		}
		if err := r.LoadDocument(e.Name(), data); err != nil {
			return err
		}
	}
	return nil
}

// LoadDocument loads one file's content: an OpenAPI v3 document as served by the
// apiserver at /openapi/v3/apis/<group>/<version> (JSON or YAML), or one or more
// CustomResourceDefinitions (apiextensions.k8s.io/v1, YAML documents separated by
// "---", or a CustomResourceDefinitionList). name is used in error messages only.
// Nothing is registered when the document fails to load.
func (r *Registry) LoadDocument(name string, data []byte) error {
	docs, err := splitDocuments(data)
	if err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	var types []*Type
	for i, raw := range docs {
		ts, err := typesFromDocument(raw)
		if err != nil {
			if len(docs) > 1 {
				return fmt.Errorf("load %s: document %d: %w", name, i+1, err)
			}
			return fmt.Errorf("load %s: %w", name, err)
		}
		types = append(types, ts...)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range types {
		if old, ok := r.byKind[t.APIVersion+" "+t.Kind]; ok {
			delete(r.byResource, old.APIVersion+" "+old.Resource)
		}
		r.byKind[t.APIVersion+" "+t.Kind] = t
		r.byResource[t.APIVersion+" "+t.Resource] = t
	}
	return nil
}
