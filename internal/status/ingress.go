package status

import (
	"encoding/json"
	"net"
	"net/netip"
	"sort"

	networkingv1 "k8s.io/api/networking/v1"
)

// DefaultIngressClass is the IngressClass name served when the config's extraContext
// does not set ingressClass.
const DefaultIngressClass = "haptic"

// Annotations of the Ingress class rules.
const (
	DefaultClassAnnotation  = "ingressclass.kubernetes.io/is-default-class"
	LegacyIngressAnnotation = "kubernetes.io/ingress.class"
)

// IngressClassOf returns extraContext.ingressClass (the raw extraContext JSON), or
// DefaultIngressClass.
func IngressClassOf(extraContext []byte) string {
	var x struct {
		IngressClass string `json:"ingressClass"`
	}
	if len(extraContext) > 0 && json.Unmarshal(extraContext, &x) == nil && x.IngressClass != "" {
		return x.IngressClass
	}
	return DefaultIngressClass
}

// OwnsIngress reports whether an Ingress belongs to the class: named by
// spec.ingressClassName or by the legacy annotation, or naming no class while the
// class is the cluster's default (isDefault).
func OwnsIngress(ing *networkingv1.Ingress, class string, isDefault bool) bool {
	if ing.Spec.IngressClassName != nil {
		return *ing.Spec.IngressClassName == class
	}
	if a, ok := ing.Annotations[LegacyIngressAnnotation]; ok {
		return a == class
	}
	return isDefault
}

// IsDefaultClass reports whether an IngressClass carries the default-class annotation.
func IsDefaultClass(ic *networkingv1.IngressClass) bool {
	return ic != nil && ic.Annotations[DefaultClassAnnotation] == "true"
}

// IngressLoadBalancer is the status.loadBalancer of our Ingresses: the data plane's
// addresses, sorted, an IP each (names as hostname).
func IngressLoadBalancer(addresses []string) networkingv1.IngressLoadBalancerStatus {
	var lb networkingv1.IngressLoadBalancerStatus
	for _, a := range sortedAddresses(addresses) {
		if net.ParseIP(a) != nil {
			lb.Ingress = append(lb.Ingress, networkingv1.IngressLoadBalancerIngress{IP: a})
		} else {
			lb.Ingress = append(lb.Ingress, networkingv1.IngressLoadBalancerIngress{Hostname: a})
		}
	}
	return lb
}

// sortedAddresses returns the addresses without duplicates, IPs first in numeric
// order, then names.
func sortedAddresses(in []string) []string {
	addrs := append([]string(nil), in...)
	sort.Slice(addrs, func(i, j int) bool {
		a, errA := netip.ParseAddr(addrs[i])
		b, errB := netip.ParseAddr(addrs[j])
		switch {
		case errA == nil && errB == nil:
			return a.Less(b)
		case errA == nil:
			return true
		case errB == nil:
			return false
		}
		return addrs[i] < addrs[j]
	})
	out := addrs[:0]
	for i, a := range addrs {
		if i == 0 || addrs[i-1] != a {
			out = append(out, a)
		}
	}
	return out
}
