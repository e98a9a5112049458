package writer

import (
	"fmt"
	"maps"
	"slices"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/haproxy-haptic/haptic/internal/status"
)

// plan computes the desired statuses and returns the writes that change something.
func (m *Manager) plan() ([]job, error) {
	src := m.src.Load()
	m.mu.Lock()
	known := m.addrsKnown
	m.mu.Unlock()
	if src == nil || !known {
		return nil, nil
	}
	seen := map[types.UID]bool{}
	raw := map[types.UID]*unstructured.Unstructured{}
	in := status.Input{ControllerName: m.controllerName(), Services: map[types.NamespacedName][]int32{},
		Secrets: map[types.NamespacedName]bool{}, SecretCABundles: map[types.NamespacedName]bool{}, Namespaces: map[string]map[string]string{},
		Programmed: map[types.NamespacedName]bool{}}
	var err error
	if in.GatewayClasses, err = objects[gwv1.GatewayClass](m, src, GatewayClasses, seen, raw); err != nil {
		return nil, err
	}
	if in.Gateways, err = objects[gwv1.Gateway](m, src, Gateways, seen, raw); err != nil {
		return nil, err
	}
	if in.HTTPRoutes, err = objects[gwv1.HTTPRoute](m, src, HTTPRoutes, seen, raw); err != nil {
		return nil, err
	}
	if in.GRPCRoutes, err = objects[gwv1.GRPCRoute](m, src, GRPCRoutes, seen, raw); err != nil {
		return nil, err
	}
	if in.TLSRoutes, err = objects[gwv1.TLSRoute](m, src, TLSRoutes, seen, raw); err != nil {
		return nil, err
	}
	if in.ListenerSets, err = objects[gwv1.ListenerSet](m, src, ListenerSets, seen, raw); err != nil {
		return nil, err
	}
	if in.ReferenceGrants, err = objects[gwv1beta1.ReferenceGrant](m, src, ReferenceGrants, seen, nil); err != nil {
		return nil, err
	}
	if in.BackendTLSPolicies, err = objects[gwv1.BackendTLSPolicy](m, src, BackendTLSPolicies, seen, raw); err != nil {
		return nil, err
	}
	for _, o := range src.list(Services) {
		u := o.(*unstructured.Unstructured)
		var ports []int32
		list, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
		for _, p := range list {
			if pm, ok := p.(map[string]any); ok {
				if v, ok := pm["port"].(int64); ok {
					ports = append(ports, int32(v))
				}
			}
		}
		in.Services[types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}] = ports
	}
	for _, o := range src.list(Secrets) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			valid, _, _ := unstructured.NestedBool(u.Object, "validCertificate")
			in.Secrets[types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}] = valid
			if ca, _, _ := unstructured.NestedBool(u.Object, "validCABundle"); ca {
				in.SecretCABundles[types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}] = true
			}
		}
	}
	in.CABundles = map[types.NamespacedName]bool{}
	for _, o := range src.list(ConfigMaps) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			valid, _, _ := unstructured.NestedBool(u.Object, "validCABundle")
			in.CABundles[types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}] = valid
		}
	}
	for _, o := range src.list(Namespaces) {
		if a, ok := o.(metav1.Object); ok {
			in.Namespaces[a.GetName()] = a.GetLabels()
		}
	}
	m.mu.Lock()
	in.Addresses = append([]string(nil), m.addresses...)
	in.PerGateway, in.GatewayAddresses = m.perGateway, m.gwAddresses
	for _, render := range slices.Sorted(maps.Keys(m.notes)) {
		in.Notes = append(in.Notes, m.notes[render]...)
	}
	programmed := m.programmed
	class := m.ingressClass
	in.BundleVersion = m.bundle
	in.SupportedFeatures = m.features
	m.mu.Unlock()
	for _, g := range in.Gateways {
		nn := types.NamespacedName{Namespace: g.Namespace, Name: g.Name}
		if r, ok := programmed[nn]; ok && r.Generation >= g.Generation && (r.UID == "" || r.UID == g.UID) {
			in.Programmed[nn] = true
		}
	}

	res := status.Compute(in)
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	var jobs []job
	for _, gc := range in.GatewayClasses {
		if want, ok := res.GatewayClasses[gc.Name]; ok {
			if want = status.MergeGatewayClass(want, gc.Status, now); !status.Equal(want, gc.Status) {
				jobs = append(jobs, job{gvr: GatewayClasses, kind: "GatewayClass", obj: raw[gc.UID], status: &want})
			}
		}
	}
	for _, g := range in.Gateways {
		if want, ok := res.Gateways[types.NamespacedName{Namespace: g.Namespace, Name: g.Name}]; ok {
			if want = status.MergeGateway(want, g.Status, now); !status.Equal(want, g.Status) {
				jobs = append(jobs, job{gvr: Gateways, kind: "Gateway", obj: raw[g.UID], status: &want})
			}
		}
	}
	for _, r := range in.HTTPRoutes {
		if want, ok := res.HTTPRoutes[types.NamespacedName{Namespace: r.Namespace, Name: r.Name}]; ok {
			if want = status.MergeRoute(want, r.Status.RouteStatus, now); !status.EqualRoute(want, r.Status.RouteStatus) {
				jobs = append(jobs, job{gvr: HTTPRoutes, kind: "HTTPRoute", obj: raw[r.UID], status: &gwv1.HTTPRouteStatus{RouteStatus: want}})
			}
		}
	}
	for _, r := range in.GRPCRoutes {
		if want, ok := res.GRPCRoutes[types.NamespacedName{Namespace: r.Namespace, Name: r.Name}]; ok {
			if want = status.MergeRoute(want, r.Status.RouteStatus, now); !status.EqualRoute(want, r.Status.RouteStatus) {
				jobs = append(jobs, job{gvr: GRPCRoutes, kind: "GRPCRoute", obj: raw[r.UID], status: &gwv1.GRPCRouteStatus{RouteStatus: want}})
			}
		}
	}
	for _, r := range in.TLSRoutes {
		if want, ok := res.TLSRoutes[types.NamespacedName{Namespace: r.Namespace, Name: r.Name}]; ok {
			if want = status.MergeRoute(want, r.Status.RouteStatus, now); !status.EqualRoute(want, r.Status.RouteStatus) {
				jobs = append(jobs, job{gvr: TLSRoutes, kind: "TLSRoute", obj: raw[r.UID], status: &gwv1.TLSRouteStatus{RouteStatus: want}})
			}
		}
	}
	for _, ls := range in.ListenerSets {
		if want, ok := res.ListenerSets[types.NamespacedName{Namespace: ls.Namespace, Name: ls.Name}]; ok {
			if want = status.MergeListenerSet(want, ls.Status, now); !status.Equal(want, ls.Status) {
				jobs = append(jobs, job{gvr: ListenerSets, kind: "ListenerSet", obj: raw[ls.UID], status: &want})
			}
		}
	}
	for _, p := range in.BackendTLSPolicies {
		if want, ok := res.BackendTLSPolicies[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]; ok {
			if want = status.MergePolicy(want, p.Status, now); !status.Equal(want, p.Status) {
				jobs = append(jobs, job{gvr: BackendTLSPolicies, kind: "BackendTLSPolicy", obj: raw[p.UID], status: &want})
			}
		}
	}
	ingJobs, err := m.planIngresses(src, class, in.Addresses, seen)
	if err != nil {
		return nil, err
	}
	jobs = append(jobs, ingJobs...)
	m.typed.prune(seen)
	m.mu.Lock()
	for uid := range m.written {
		if !seen[uid] {
			delete(m.written, uid) // deleted since
		}
	}
	m.mu.Unlock()
	return jobs, nil
}

func (m *Manager) planIngresses(src *Source, class string, addresses []string, seen map[types.UID]bool) ([]job, error) {
	isDefault := false
	for _, o := range src.list(IngressClasses) {
		u := o.(*unstructured.Unstructured)
		if u.GetName() == class && u.GetAnnotations()[status.DefaultClassAnnotation] == "true" {
			isDefault = true
		}
	}
	lb := status.IngressLoadBalancer(addresses)
	key := fmt.Sprintf("%s\x00%v\x00%q", class, isDefault, addresses)
	m.mu.Lock()
	if m.settled.key != key {
		m.settled = settledIngresses{key: key, rv: map[types.UID]string{}}
	}
	settled := m.settled.rv
	m.mu.Unlock()
	listed := src.list(Ingresses)
	var jobs []job
	for _, o := range listed {
		if u, ok := o.(*unstructured.Unstructured); ok && settled[u.GetUID()] == u.GetResourceVersion() {
			continue
		}
		u := m.current(o)
		if u == nil {
			continue
		}
		ing, err := convert[networkingv1.Ingress](&m.typed, u, seen)
		if err != nil {
			return nil, fmt.Errorf("decode ingresses %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		if !status.OwnsIngress(ing, class, isDefault) || status.Equal(lb, ing.Status.LoadBalancer) {
			if u == o { // the informer's own version, not our write's that it has yet to bring
				settled[u.GetUID()] = u.GetResourceVersion()
			}
			continue
		}
		jobs = append(jobs, job{gvr: Ingresses, kind: "Ingress", obj: u,
			status: &networkingv1.IngressStatus{LoadBalancer: lb}})
	}
	if len(settled) > len(listed) { // some were deleted: keep only those listed
		kept := make(map[types.UID]string, len(listed))
		for _, o := range listed {
			if u, ok := o.(*unstructured.Unstructured); ok {
				if rv, ok := settled[u.GetUID()]; ok {
					kept[u.GetUID()] = rv
				}
			}
		}
		m.mu.Lock()
		m.settled.rv = kept
		m.mu.Unlock()
	}
	return jobs, nil
}
