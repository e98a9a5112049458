package status

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BackendTLSPolicy status, as the gateway library applies the policies
// (util-gateway-backend-tls): a policy's ancestors are our Gateways that routes
// (HTTPRoute, GRPCRoute) bring its target Services to; each gets the same Accepted
// and ResolvedRefs conditions. For one target (Service and sectionName) the oldest
// policy wins (creationTimestamp, then name) and the others are Conflicted. A
// policy the library cannot apply fails closed there (its backend answers 500), and
// its conditions say why.

// UnsupportedSubjectAltNames is the Accepted=False message of a policy whose
// subjectAltNames HAProxy 2.6 cannot verify: verifyhost checks one DNS name.
const UnsupportedSubjectAltNames = "subjectAltNames: HAProxy 2.6 verifies one DNS name (verifyhost); URI names, wildcards and more than one name are not supported"

var preciseHostname = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// btlsTarget is what one targetRef selects: a Service and a port name ("" for all).
type btlsTarget struct {
	ns, service, section string
}

// btlsWinners maps each target to the policy that takes precedence on it.
func btlsWinners(policies []*gwv1.BackendTLSPolicy) map[btlsTarget]*gwv1.BackendTLSPolicy {
	win := map[btlsTarget]*gwv1.BackendTLSPolicy{}
	for _, p := range policies {
		for _, t := range p.Spec.TargetRefs {
			if t.Group != "" || t.Kind != "Service" {
				continue
			}
			k := btlsTarget{p.Namespace, string(t.Name), ""}
			if t.SectionName != nil {
				k.section = string(*t.SectionName)
			}
			if cur, ok := win[k]; !ok || btlsOlder(p, cur) {
				win[k] = p
			}
		}
	}
	return win
}

func btlsOlder(a, b *gwv1.BackendTLSPolicy) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// btlsAncestors returns, for each Service, our Gateways that routes send to it.
func btlsAncestors(in Input, gateways map[types.NamespacedName]*gateway) map[types.NamespacedName]map[types.NamespacedName]bool {
	out := map[types.NamespacedName]map[types.NamespacedName]bool{}
	add := func(routeNS string, parents []gwv1.ParentReference, refs []gwv1.BackendObjectReference) {
		var gws []types.NamespacedName
		for _, pr := range parents {
			if (pr.Group != nil && *pr.Group != Group) || (pr.Kind != nil && *pr.Kind != KindGateway) {
				continue
			}
			ns := routeNS
			if pr.Namespace != nil {
				ns = string(*pr.Namespace)
			}
			if gateways[key(ns, string(pr.Name))] != nil {
				gws = append(gws, key(ns, string(pr.Name)))
			}
		}
		for _, r := range refs {
			if (r.Group != nil && *r.Group != "") || (r.Kind != nil && *r.Kind != "Service") {
				continue
			}
			ns := routeNS
			if r.Namespace != nil {
				ns = string(*r.Namespace)
			}
			svc := key(ns, string(r.Name))
			for _, g := range gws {
				if out[svc] == nil {
					out[svc] = map[types.NamespacedName]bool{}
				}
				out[svc][g] = true
			}
		}
	}
	for _, rt := range in.HTTPRoutes {
		add(rt.Namespace, rt.Spec.ParentRefs, httpBackendRefs(rt))
	}
	for _, rt := range in.GRPCRoutes {
		add(rt.Namespace, rt.Spec.ParentRefs, grpcBackendRefs(rt))
	}
	return out
}

// btlsConditions returns a policy's Accepted and ResolvedRefs conditions.
func btlsConditions(p *gwv1.BackendTLSPolicy, in Input, win map[btlsTarget]*gwv1.BackendTLSPolicy) []metav1.Condition {
	gen := p.Generation
	accepted := cond(string(gwv1.PolicyConditionAccepted), true, string(gwv1.PolicyReasonAccepted), "the policy applies to its targets", gen)
	resolved := cond(string(gwv1.BackendTLSPolicyConditionResolvedRefs), true, string(gwv1.BackendTLSPolicyReasonResolvedRefs), "every caCertificateRef resolves", gen)
	v := p.Spec.Validation
	var problems []string
	usable := false
	for _, ref := range v.CACertificateRefs {
		name := p.Namespace + "/" + string(ref.Name)
		switch {
		case ref.Group != "" || ref.Kind != "ConfigMap":
			if resolved.Status == metav1.ConditionTrue {
				resolved = cond(resolved.Type, false, string(gwv1.BackendTLSPolicyReasonInvalidKind), "", gen)
			}
			problems = append(problems, fmt.Sprintf("caCertificateRef %s: kind %s is not supported (core ConfigMap is)",
				name, strings.TrimPrefix(string(ref.Group)+"/"+string(ref.Kind), "/")))
		case !in.CABundles[key(p.Namespace, string(ref.Name))]:
			if resolved.Status == metav1.ConditionTrue {
				resolved = cond(resolved.Type, false, string(gwv1.BackendTLSPolicyReasonInvalidCACertificateRef), "", gen)
			}
			problems = append(problems, fmt.Sprintf("caCertificateRef %s: no such ConfigMap with PEM certificates in ca.crt", name))
		default:
			usable = true
		}
	}
	if len(problems) > 0 {
		resolved.Message = strings.Join(problems, "; ") + " (connections to the targets fail)"
	}
	var conflicted []string
	for _, t := range p.Spec.TargetRefs {
		k := btlsTarget{p.Namespace, string(t.Name), ""}
		if t.SectionName != nil {
			k.section = string(*t.SectionName)
		}
		if w := win[k]; w != nil && w != p && t.Group == "" && t.Kind == "Service" {
			conflicted = append(conflicted, fmt.Sprintf("Service %s port %q is %s/%s's (older)", k.service, k.section, w.Namespace, w.Name))
		}
	}
	switch {
	case len(conflicted) > 0:
		accepted = cond(accepted.Type, false, string(gwv1.PolicyReasonConflicted), strings.Join(conflicted, "; "), gen)
	case len(v.CACertificateRefs) > 0 && !usable:
		accepted = cond(accepted.Type, false, string(gwv1.BackendTLSPolicyReasonNoValidCACertificate), "no caCertificateRef is usable: "+resolved.Message, gen)
	case len(v.CACertificateRefs) == 0 && (v.WellKnownCACertificates == nil || *v.WellKnownCACertificates != gwv1.WellKnownCACertificatesSystem):
		wk := ""
		if v.WellKnownCACertificates != nil {
			wk = string(*v.WellKnownCACertificates)
		}
		accepted = cond(accepted.Type, false, string(gwv1.PolicyReasonInvalid), fmt.Sprintf("wellKnownCACertificates %q is not supported (System is)", wk), gen)
	case !preciseHostname.MatchString(string(v.Hostname)):
		accepted = cond(accepted.Type, false, string(gwv1.PolicyReasonInvalid), fmt.Sprintf("hostname %q is not a DNS name", v.Hostname), gen)
	case !btlsSANsSupported(v.SubjectAltNames):
		accepted = cond(accepted.Type, false, string(gwv1.PolicyReasonInvalid), UnsupportedSubjectAltNames+" (connections to the targets fail)", gen)
	}
	return []metav1.Condition{accepted, resolved}
}

// btlsSANsSupported: none, or one of type Hostname without a wildcard.
func btlsSANsSupported(sans []gwv1.SubjectAltName) bool {
	if len(sans) == 0 {
		return true
	}
	return len(sans) == 1 && sans[0].Type == gwv1.HostnameSubjectAltNameType && preciseHostname.MatchString(string(sans[0].Hostname))
}

// backendTLSPolicyStatus returns the desired status of every policy that has an
// ancestor of ours or carries an entry of ours (which then goes); entries of other
// controllers are kept.
func backendTLSPolicyStatus(in Input, gateways map[types.NamespacedName]*gateway) map[types.NamespacedName]gwv1.PolicyStatus {
	out := map[types.NamespacedName]gwv1.PolicyStatus{}
	if len(in.BackendTLSPolicies) == 0 {
		return out // (the ancestors are a walk over every route)
	}
	win := btlsWinners(in.BackendTLSPolicies)
	ancestors := btlsAncestors(in, gateways)
	for _, p := range in.BackendTLSPolicies {
		gws := map[types.NamespacedName]bool{}
		for _, t := range p.Spec.TargetRefs {
			if t.Group == "" && t.Kind == "Service" {
				for g := range ancestors[key(p.Namespace, string(t.Name))] {
					gws[g] = true
				}
			}
		}
		var st gwv1.PolicyStatus
		ours := false
		for _, a := range p.Status.Ancestors {
			if a.ControllerName == in.ControllerName {
				ours = true
				continue
			}
			st.Ancestors = append(st.Ancestors, a)
		}
		if len(gws) == 0 && !ours {
			continue
		}
		conds := btlsConditions(p, in, win)
		keys := make([]types.NamespacedName, 0, len(gws))
		for g := range gws {
			keys = append(keys, g)
		}
		slices.SortFunc(keys, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
		for _, g := range keys {
			ns := gwv1.Namespace(g.Namespace)
			st.Ancestors = append(st.Ancestors, gwv1.PolicyAncestorStatus{
				AncestorRef:    gwv1.ParentReference{Group: groupPtr(Group), Kind: kindPtr(KindGateway), Namespace: &ns, Name: gwv1.ObjectName(g.Name)},
				ControllerName: in.ControllerName,
				Conditions:     slices.Clone(conds),
			})
		}
		// The API allows 16 ancestors; ours beyond that are left out.
		if len(st.Ancestors) > 16 {
			st.Ancestors = st.Ancestors[:16]
		}
		if st.Ancestors == nil {
			st.Ancestors = []gwv1.PolicyAncestorStatus{}
		}
		out[key(p.Namespace, p.Name)] = st
	}
	return out
}

func kindPtr(k string) *gwv1.Kind { x := gwv1.Kind(k); return &x }

// MergePolicy returns desired with transition times of our ancestors' conditions
// taken from current (entries of other controllers are already current's own).
func MergePolicy(desired, current gwv1.PolicyStatus, now metav1.Time) gwv1.PolicyStatus {
	as := make([]gwv1.PolicyAncestorStatus, len(desired.Ancestors))
	for i, a := range desired.Ancestors {
		for _, c := range current.Ancestors {
			if c.ControllerName == a.ControllerName && Equal(c.AncestorRef, a.AncestorRef) {
				a.Conditions = MergeConditions(a.Conditions, c.Conditions, now)
				break
			}
		}
		for j := range a.Conditions {
			if a.Conditions[j].LastTransitionTime.IsZero() {
				a.Conditions[j].LastTransitionTime = now
			}
		}
		as[i] = a
	}
	desired.Ancestors = as
	return desired
}
