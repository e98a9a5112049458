package schema

import (
	"embed"
	"fmt"
	"maps"
	"sync"
)

// The bundled schemas are generated, never edited by hand: Kubernetes built-ins by
// reflecting over k8s.io/api, Gateway API from its experimental CRDs in the module cache.
//go:generate go run github.com/haproxy-haptic/haptic/tools/genschemas -out bundled

//go:embed bundled
var bundledFS embed.FS

// Bundled returns a new registry preloaded with the embedded schemas: core/v1
// (Service, Secret, ConfigMap, Pod, Endpoints, Namespace), discovery.k8s.io/v1
// EndpointSlice, networking.k8s.io/v1 (Ingress, IngressClass) and the Gateway API
// v1.6.3 experimental-channel kinds at every served version. Further LoadDir or
// LoadDocument calls on it override these per apiVersion and kind.
//
// The embedded documents are parsed once per process; every call returns a fresh
// registry sharing the (immutable) types.
func Bundled() (*Registry, error) {
	bundledOnce.Do(func() {
		r := NewRegistry()
		if err := r.loadFS(bundledFS, "bundled"); err != nil {
			bundledErr = fmt.Errorf("load bundled schemas: %w", err)
			return
		}
		bundledReg = r
	})
	if bundledErr != nil {
		return nil, bundledErr
	}
	bundledReg.mu.RLock()
	defer bundledReg.mu.RUnlock()
	return &Registry{byKind: maps.Clone(bundledReg.byKind), byResource: maps.Clone(bundledReg.byResource)}, nil
}

var (
	bundledOnce sync.Once
	bundledReg  *Registry // never handed out: callers get copies
	bundledErr  error
)
