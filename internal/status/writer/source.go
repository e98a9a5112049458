package writer

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// Watched resources.
var (
	GatewayClasses  = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
	Gateways        = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	HTTPRoutes      = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	GRPCRoutes      = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "grpcroutes"}
	ReferenceGrants = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1beta1", Resource: "referencegrants"}
	Services        = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	Secrets         = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	Namespaces      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	Ingresses       = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	IngressClasses  = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}
)

// served returns which of the Gateway API resources the API server serves (all of
// them when d is nil).
func served(d discovery.DiscoveryInterface) map[schema.GroupVersionResource]bool {
	out := map[schema.GroupVersionResource]bool{}
	for _, gvr := range []schema.GroupVersionResource{GatewayClasses, Gateways, HTTPRoutes, GRPCRoutes, ReferenceGrants} {
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

// stripManagedFields keeps managedFields out of the caches (a status update that
// omits them leaves them as they are).
func stripManagedFields(obj any) (any, error) {
	if a, ok := obj.(metav1.Object); ok {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// keepCertificateValidity reduces a cached TLS Secret to its name and whether
// tls.crt and tls.key hold a certificate and its private key.
func keepCertificateValidity(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
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
	out := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "validCertificate": valid,
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace(),
			"resourceVersion": u.GetResourceVersion(), "uid": string(u.GetUID())},
	}}
	return out, nil
}

// keepServicePorts reduces a cached Service to its name and ports.
func keepServicePorts(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
	slim := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace(), "resourceVersion": u.GetResourceVersion(), "uid": string(u.GetUID())},
		"spec":     map[string]any{"ports": ports},
	}}
	return slim, nil
}

// sources are the informers the computation reads.
type sources struct {
	informers map[schema.GroupVersionResource]cache.SharedIndexInformer
	synced    []cache.InformerSynced
}

func (m *Manager) startSources(ctx context.Context) *sources {
	s := &sources{informers: map[schema.GroupVersionResource]cache.SharedIndexInformer{}}
	dyn := dynamicinformer.NewDynamicSharedInformerFactory(m.opts.Dynamic, 0)
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
		inf := dyn.ForResource(gvr).Informer()
		if gvr == Services {
			_ = inf.SetTransform(keepServicePorts)
		} else {
			_ = inf.SetTransform(stripManagedFields)
		}
		_, _ = inf.AddEventHandler(handler)
		s.informers[gvr] = inf
		s.synced = append(s.synced, inf.HasSynced)
	}
	dyn.Start(ctx.Done())
	meta := metadatainformer.NewSharedInformerFactory(m.opts.Metadata, 0)
	// TLS Secrets are read whole (a malformed one makes an InvalidCertificateRef) but
	// only their validity is kept: no key material stays in the cache.
	tls := dynamicinformer.NewFilteredDynamicInformer(m.opts.Dynamic, Secrets, metav1.NamespaceAll, 0,
		cache.Indexers{}, func(o *metav1.ListOptions) { o.FieldSelector = "type=kubernetes.io/tls" }).Informer()
	_ = tls.SetTransform(keepCertificateValidity)
	nsInf := meta.ForResource(Namespaces).Informer()
	_ = nsInf.SetTransform(stripManagedFields)
	for gvr, inf := range map[schema.GroupVersionResource]cache.SharedIndexInformer{Secrets: tls, Namespaces: nsInf} {
		_, _ = inf.AddEventHandler(handler)
		s.informers[gvr] = inf
		s.synced = append(s.synced, inf.HasSynced)
	}
	go tls.Run(ctx.Done())
	meta.Start(ctx.Done())
	return s
}

func (s *sources) list(gvr schema.GroupVersionResource) []any {
	inf, ok := s.informers[gvr]
	if !ok {
		return nil
	}
	return inf.GetStore().List()
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
