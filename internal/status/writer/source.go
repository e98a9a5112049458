package writer

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"

	"github.com/haproxy-haptic/haptic/internal/fieldpath"
	"github.com/haproxy-haptic/haptic/internal/watch"
)

// Watched resources.
var (
	GatewayClasses     = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
	Gateways           = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	HTTPRoutes         = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	GRPCRoutes         = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "grpcroutes"}
	TLSRoutes          = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "tlsroutes"}
	ListenerSets       = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "listenersets"}
	ReferenceGrants    = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1beta1", Resource: "referencegrants"}
	BackendTLSPolicies = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "backendtlspolicies"}
	Services           = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	Secrets            = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	Namespaces         = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	ConfigMaps         = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	Ingresses          = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	IngressClasses     = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}
)

// served returns which of the Gateway API resources the API server serves (all of
// them when d is nil).
func served(d discovery.DiscoveryInterface) map[schema.GroupVersionResource]bool {
	out := map[schema.GroupVersionResource]bool{}
	for _, gvr := range []schema.GroupVersionResource{GatewayClasses, Gateways, HTTPRoutes, GRPCRoutes, TLSRoutes, ListenerSets, ReferenceGrants, BackendTLSPolicies} {
		if d == nil {
			out[gvr] = true
			continue
		}
		list, err := d.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource {
				out[gvr] = true
			}
		}
	}
	return out
}

// withoutManagedFields is an object without managedFields; obj is not modified (it
// may be shared with an informer's cache).
func withoutManagedFields(obj any) any {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", "managedFields"); ok {
			return &unstructured.Unstructured{Object: managedFieldsPath.Without(o.Object)}
		}
	case *metav1.PartialObjectMetadata:
		if o.ManagedFields != nil {
			cp := *o
			cp.ManagedFields = nil
			return &cp
		}
	}
	return obj
}

var managedFieldsPath = fieldpath.MustParse("metadata.managedFields")

// keepCertificateValidity reduces a TLS Secret to its name, whether tls.crt and
// tls.key hold a certificate and its private key, and whether ca.crt holds PEM
// certificates (a CA bundle, as cert-manager writes it): no key material is
// kept. It accepts its own output.
func keepCertificateValidity(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	if _, reduced := u.Object["validCertificate"]; reduced {
		return obj, nil
	}
	valid := false
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	crt, errC := base64.StdEncoding.DecodeString(data["tls.crt"])
	key, errK := base64.StdEncoding.DecodeString(data["tls.key"])
	if errC == nil && errK == nil {
		_, err := tls.X509KeyPair(crt, key)
		valid = err == nil
	}
	ca, errCA := base64.StdEncoding.DecodeString(data["ca.crt"])
	out := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "validCertificate": valid, "validCABundle": errCA == nil && validCABundle(ca),
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace(),
			"resourceVersion": u.GetResourceVersion(), "uid": string(u.GetUID())},
	}}
	return out, nil
}

// keepCABundleValidity reduces a ConfigMap to its name and whether ca.crt holds
// PEM certificates (and nothing else PEM-encoded). It accepts its own output.
func keepCABundleValidity(obj any) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj
	}
	if _, reduced := u.Object["validCABundle"]; reduced {
		return obj
	}
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "validCABundle": validCABundle([]byte(data["ca.crt"])),
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace(),
			"resourceVersion": u.GetResourceVersion(), "uid": string(u.GetUID())},
	}}
}

func validCABundle(data []byte) bool {
	n := 0
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return n > 0
		}
		if block.Type != "CERTIFICATE" {
			return false
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return false
		}
		n++
	}
}

// validity remembers each Secret's reduction by resourceVersion: a shared informer
// caches whole Secrets and every status pass reads them, but a certificate is
// parsed once per version.
type validity struct {
	mu sync.Mutex
	m  map[types.UID]*unstructured.Unstructured
}

func (v *validity) reduce(obj any) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj
	}
	if _, reduced := u.Object["validCertificate"]; reduced {
		return obj
	}
	v.mu.Lock()
	cached, ok := v.m[u.GetUID()]
	v.mu.Unlock()
	if ok && cached.GetResourceVersion() == u.GetResourceVersion() {
		return cached
	}
	out, _ := keepCertificateValidity(u)
	v.mu.Lock()
	if v.m == nil {
		v.m = map[types.UID]*unstructured.Unstructured{}
	}
	v.m[u.GetUID()] = out.(*unstructured.Unstructured)
	v.mu.Unlock()
	return out
}

func (v *validity) forget(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if m, ok := obj.(metav1.Object); ok {
		v.mu.Lock()
		delete(v.m, m.GetUID())
		v.mu.Unlock()
	}
}

// keepServicePorts reduces a Service to its name and ports (it does not modify obj).
func keepServicePorts(obj any) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj
	}
	ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
	slim := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace(), "resourceVersion": u.GetResourceVersion(), "uid": string(u.GetUID())},
		"spec":     map[string]any{"ports": ports},
	}}
	return slim
}

// Source is what the computation reads: one consumer per resource of a set of
// informers it shares with the controller's other stages (watch.Informers).
type Source struct {
	consumers map[schema.GroupVersionResource]*watch.Consumer
}

// Register asks set for every resource the status computation reads — those the
// API server serves — and returns the Source to Use once set has started. An event
// on any of them asks for a recompute.
func (m *Manager) Register(set *watch.Informers) *Source {
	s := &Source{consumers: map[schema.GroupVersionResource]*watch.Consumer{}}
	gvrs := []schema.GroupVersionResource{Services, Ingresses, IngressClasses}
	for gvr, ok := range served(m.opts.Discovery) {
		if ok {
			gvrs = append(gvrs, gvr)
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { m.Trigger() },
		UpdateFunc: func(_, _ any) { m.Trigger() },
		DeleteFunc: func(any) { m.Trigger() },
	}
	for _, gvr := range gvrs {
		need := watch.Need{GVR: gvr, Reduce: withoutManagedFields}
		if gvr == Services { // only their ports are read
			need = watch.Need{GVR: gvr, Trim: keepServicePorts, DropsStatus: true}
		}
		c := set.Need(need)
		c.AddEventHandler(handler)
		s.consumers[gvr] = c
	}
	// TLS Secrets are read whole (a malformed one makes an InvalidCertificateRef) but
	// only their validity is kept: no key material stays in the cache.
	certs := &validity{}
	tlsSecrets := set.Need(watch.Need{GVR: Secrets, FieldSelector: "type=kubernetes.io/tls", Reduce: certs.reduce})
	tlsSecrets.AddEventHandler(handler)
	tlsSecrets.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: certs.forget})
	s.consumers[Secrets] = tlsSecrets
	// ConfigMaps only as "ca.crt holds PEM certificates" (client certificate
	// validation's caCertificateRefs).
	cms := set.Need(watch.Need{GVR: ConfigMaps, Reduce: keepCABundleValidity})
	cms.AddEventHandler(handler)
	s.consumers[ConfigMaps] = cms
	ns := set.Need(watch.Need{GVR: Namespaces, Metadata: true, Reduce: withoutManagedFields})
	ns.AddEventHandler(handler)
	s.consumers[Namespaces] = ns
	return s
}

// Use makes src what the Manager reads (replacing the previous one: a new config
// has informers of its own); a recompute follows once it has synced.
func (m *Manager) Use(ctx context.Context, src *Source) {
	m.src.Store(src)
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), src.synced) {
			m.Trigger()
		}
	}()
}

// Forget stops reading src (its informers stopped) unless another source replaced it.
func (m *Manager) Forget(src *Source) {
	m.src.CompareAndSwap(src, nil)
}

func (s *Source) synced() bool {
	for _, c := range s.consumers {
		if !c.HasSynced() {
			return false
		}
	}
	return true
}

func (s *Source) list(gvr schema.GroupVersionResource) []any {
	if s == nil {
		return nil
	}
	c, ok := s.consumers[gvr]
	if !ok {
		return nil
	}
	return c.List()
}

// typedCache converts cached objects to typed values once per resourceVersion.
type typedCache struct {
	mu sync.Mutex
	m  map[types.UID]typedEntry
}

type typedEntry struct {
	rv  string
	obj any
}

// convert returns u as a new(T), converting it only when its resourceVersion changed.
func convert[T any](c *typedCache, u *unstructured.Unstructured, seen map[types.UID]bool) (*T, error) {
	uid := u.GetUID()
	seen[uid] = true
	c.mu.Lock()
	e, ok := c.m[uid]
	c.mu.Unlock()
	if ok && e.rv == u.GetResourceVersion() {
		if t, ok := e.obj.(*T); ok {
			return t, nil
		}
	}
	t := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.m[uid] = typedEntry{rv: u.GetResourceVersion(), obj: t}
	c.mu.Unlock()
	return t, nil
}

// prune forgets objects not seen in the last pass.
func (c *typedCache) prune(seen map[types.UID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid := range c.m {
		if !seen[uid] {
			delete(c.m, uid)
		}
	}
}
