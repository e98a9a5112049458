package status

import (
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// grants answers whether ReferenceGrants allow a cross-namespace reference.
type grants map[string][]*gwv1beta1.ReferenceGrant // by namespace

func newGrants(list []*gwv1beta1.ReferenceGrant) grants {
	g := grants{}
	for _, rg := range list {
		g[rg.Namespace] = append(g[rg.Namespace], rg)
	}
	return g
}

// allows reports whether an object of fromGroup/fromKind in fromNS may refer to
// toGroup/toKind toName in toNS.
func (g grants) allows(fromGroup, fromKind, fromNS, toGroup, toKind, toNS, toName string) bool {
	if fromNS == toNS {
		return true
	}
	for _, rg := range g[toNS] {
		from := false
		for _, f := range rg.Spec.From {
			if string(f.Group) == fromGroup && string(f.Kind) == fromKind && string(f.Namespace) == fromNS {
				from = true
				break
			}
		}
		if !from {
			continue
		}
		for _, t := range rg.Spec.To {
			if string(t.Group) == toGroup && string(t.Kind) == toKind && (t.Name == nil || *t.Name == "" || string(*t.Name) == toName) {
				return true
			}
		}
	}
	return false
}
