package status

import (
	"fmt"
	"net"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routeKindsFor are the route kinds a listener protocol can carry; nil: the protocol
// is not supported.
func routeKindsFor(p gwv1.ProtocolType) []string {
	switch p {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType:
		return []string{KindHTTPRoute, KindGRPCRoute}
	case gwv1.TLSProtocolType:
		return []string{KindTLSRoute}
	}
	return nil
}

// owner is the object that declares a listener: its Gateway, or a ListenerSet
// attached to it (gw is then the parent).
type owner struct {
	kind, namespace, name string
	generation            int64
	gw                    *gwv1.Gateway
}

func gatewayOwner(gw *gwv1.Gateway) owner {
	return owner{kind: KindGateway, namespace: gw.Namespace, name: gw.Name, generation: gw.Generation, gw: gw}
}

func newGateway(gw *gwv1.Gateway, in Input, grants grants) *gateway {
	g := &gateway{gw: gw}
	for _, l := range gw.Spec.Listeners {
		g.listeners = append(g.listeners, newListener(gatewayOwner(gw), l, in, grants))
	}
	conflicts(g)
	return g
}

func newListener(o owner, l gwv1.Listener, in Input, grants grants) *listener {
	gw, gen := o.gw, o.generation
	li := &listener{spec: l, ns: o.namespace, attached: map[string]bool{}}
	li.status.Name = l.Name
	li.kinds = []gwv1.RouteGroupKind{}
	possible := routeKindsFor(l.Protocol)
	if possible == nil {
		li.status.Conditions = []metav1.Condition{
			cond(string(gwv1.ListenerConditionAccepted), false, string(gwv1.ListenerReasonUnsupportedProtocol),
				fmt.Sprintf("protocol %s is not supported (HTTP, HTTPS, TLS are)", l.Protocol), gen),
			cond(string(gwv1.ListenerConditionResolvedRefs), true, string(gwv1.ListenerReasonResolvedRefs), "", gen),
			cond(string(gwv1.ListenerConditionProgrammed), false, string(gwv1.ListenerReasonInvalid), "listener is not accepted", gen),
		}
		li.status.SupportedKinds = li.kinds
		return li
	}
	li.valid = true
	refsOK, refsReason, refsMsg := true, string(gwv1.ListenerReasonResolvedRefs), ""
	// Kinds: the allowed ones, or every kind the protocol carries.
	if l.AllowedRoutes != nil && len(l.AllowedRoutes.Kinds) > 0 {
		var bad []string
		for _, k := range l.AllowedRoutes.Kinds {
			grp := Group
			if k.Group != nil {
				grp = string(*k.Group)
			}
			if grp == Group && contains(possible, string(k.Kind)) {
				li.kinds = append(li.kinds, gwv1.RouteGroupKind{Group: groupPtr(Group), Kind: k.Kind})
			} else {
				bad = append(bad, grp+"/"+string(k.Kind))
			}
		}
		if len(bad) > 0 {
			refsOK, refsReason = false, string(gwv1.ListenerReasonInvalidRouteKinds)
			refsMsg = "unsupported route kinds: " + strings.Join(bad, ", ")
		}
	} else {
		for _, k := range possible {
			li.kinds = append(li.kinds, gwv1.RouteGroupKind{Group: groupPtr(Group), Kind: gwv1.Kind(k)})
		}
	}
	li.status.SupportedKinds = li.kinds
	switch {
	case refsOK && l.Protocol == gwv1.HTTPSProtocolType:
		refsOK, refsReason, refsMsg = certificateRefs(o, l, in, grants)
	case refsOK && l.Protocol == gwv1.TLSProtocolType:
		refsOK, refsReason, refsMsg = tlsListenerRefs(o, l, in, grants)
	}
	if refsOK && l.Protocol == gwv1.HTTPSProtocolType {
		if reason, msg, usable := clientCARefs(gw, l, in, grants); reason != "" {
			refsOK, refsReason, refsMsg = false, reason, msg
			if !usable {
				li.valid = false
				li.status.Conditions = []metav1.Condition{
					cond(string(gwv1.ListenerConditionAccepted), false, string(gwv1.ListenerReasonNoValidCACertificate), msg, gen),
					cond(string(gwv1.ListenerConditionResolvedRefs), false, reason, msg, gen),
					cond(string(gwv1.ListenerConditionProgrammed), false, string(gwv1.ListenerReasonInvalid), msg, gen),
				}
				return li
			}
		}
	}
	li.refsOK = refsOK
	if why, ok := in.portTaken[o.kind+" "+o.namespace+"/"+o.name][string(l.Name)]; ok {
		// The configuration has no frontend for it: nothing can attach.
		li.valid = false
		li.status.Conditions = []metav1.Condition{
			cond(string(gwv1.ListenerConditionAccepted), false, string(gwv1.ListenerReasonPortUnavailable), why, gen),
			cond(string(gwv1.ListenerConditionResolvedRefs), refsOK, refsReason, refsMsg, gen),
			cond(string(gwv1.ListenerConditionProgrammed), false, string(gwv1.ListenerReasonInvalid), why, gen),
		}
		return li
	}
	programmed := cond(string(gwv1.ListenerConditionProgrammed), true, string(gwv1.ListenerReasonProgrammed), "", gen)
	switch {
	case !refsOK:
		programmed = cond(string(gwv1.ListenerConditionProgrammed), false, string(gwv1.ListenerReasonInvalid), refsMsg, gen)
	case !in.Programmed[key(gw.Namespace, gw.Name)]:
		programmed = cond(string(gwv1.ListenerConditionProgrammed), false, string(gwv1.ListenerReasonPending),
			"waiting for the configuration to be live on an HAProxy pod", gen)
	}
	li.status.Conditions = []metav1.Condition{
		cond(string(gwv1.ListenerConditionAccepted), true, string(gwv1.ListenerReasonAccepted), "", gen),
		cond(string(gwv1.ListenerConditionResolvedRefs), refsOK, refsReason, refsMsg, gen),
		programmed,
	}
	return li
}

// secretRefOf is a Secret reference's group, kind and namespace, defaulted (core
// group, Secret, the referring object's namespace).
func secretRefOf(ref gwv1.SecretObjectReference, defaultNS string) (group, kind, ns string) {
	group, kind, ns = "", "Secret", defaultNS
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return group, kind, ns
}

// certificateRefs checks an HTTPS listener's TLS configuration (references from
// the object that declares it: a Gateway's grants are not a ListenerSet's).
func certificateRefs(o owner, l gwv1.Listener, in Input, grants grants) (bool, string, string) {
	invalid := string(gwv1.ListenerReasonInvalidCertificateRef)
	if l.TLS == nil || len(l.TLS.CertificateRefs) == 0 {
		return false, invalid, "an HTTPS listener needs tls.certificateRefs"
	}
	if l.TLS.Mode != nil && *l.TLS.Mode != gwv1.TLSModeTerminate {
		return false, invalid, "HTTPS listeners support tls.mode Terminate only"
	}
	for _, ref := range l.TLS.CertificateRefs {
		grp, kind, ns := secretRefOf(ref, o.namespace)
		name := ns + "/" + string(ref.Name)
		if grp != "" || kind != "Secret" {
			return false, invalid, fmt.Sprintf("certificateRef %s: kind %s/%s is not supported (core Secret is)", name, grp, kind)
		}
		if ns != o.namespace && !grants.allows(Group, o.kind, o.namespace, "", "Secret", ns, string(ref.Name)) {
			return false, string(gwv1.ListenerReasonRefNotPermitted), fmt.Sprintf("certificateRef %s: no ReferenceGrant allows it", name)
		}
		if !in.Secrets[key(ns, string(ref.Name))] {
			return false, invalid, fmt.Sprintf("certificateRef %s: no such TLS Secret", name)
		}
	}
	return true, string(gwv1.ListenerReasonResolvedRefs), ""
}

// conflicts marks listeners that share a port with incompatible protocols or with
// the same hostname.
func conflicts(g *gateway) {
	gen := g.gw.Generation
	for i, a := range g.listeners {
		reason := ""
		for j, b := range g.listeners {
			if i == j || a.spec.Port != b.spec.Port {
				continue
			}
			if a.spec.Protocol != b.spec.Protocol {
				reason = string(gwv1.ListenerReasonProtocolConflict)
				break
			}
			if hostOf(a.spec.Hostname) == hostOf(b.spec.Hostname) {
				reason = string(gwv1.ListenerReasonHostnameConflict)
			}
		}
		if reason == "" {
			a.status.Conditions = append(a.status.Conditions,
				cond(string(gwv1.ListenerConditionConflicted), false, string(gwv1.ListenerReasonNoConflicts), "", gen))
			continue
		}
		msg := fmt.Sprintf("port %d: %s with another listener", a.spec.Port, reason)
		a.valid = false
		for k, c := range a.status.Conditions {
			switch c.Type {
			case string(gwv1.ListenerConditionAccepted):
				if c.Status == metav1.ConditionTrue {
					a.status.Conditions[k] = cond(c.Type, false, reason, msg, gen)
				}
			case string(gwv1.ListenerConditionProgrammed):
				a.status.Conditions[k] = cond(c.Type, false, string(gwv1.ListenerReasonInvalid), msg, gen)
			}
		}
		a.status.Conditions = append(a.status.Conditions, cond(string(gwv1.ListenerConditionConflicted), true, reason, msg, gen))
	}
}

func hostOf(h *gwv1.Hostname) string {
	if h == nil {
		return ""
	}
	return string(*h)
}

func gatewayStatus(g *gateway, in Input, grants grants) gwv1.GatewayStatus {
	gw := g.gw
	gen := gw.Generation
	var st gwv1.GatewayStatus
	ipType := gwv1.IPAddressType
	addrs := gatewayAddresses(gw, in)
	have := map[string]bool{}
	for _, a := range addrs {
		have[a] = true
		st.Addresses = append(st.Addresses, gwv1.GatewayStatusAddress{Type: &ipType, Value: a})
	}
	accepted := cond(string(gwv1.GatewayConditionAccepted), true, string(gwv1.GatewayReasonAccepted), "", gen)
	programmed := cond(string(gwv1.GatewayConditionProgrammed), true, string(gwv1.GatewayReasonProgrammed), "", gen)
	valid, invalid := 0, 0
	for _, l := range g.listeners {
		if l.valid {
			valid++
		} else {
			invalid++
		}
		l.status.AttachedRoutes = int32(len(l.attached))
		st.Listeners = append(st.Listeners, l.status)
	}
	switch {
	case invalid > 0 && valid == 0:
		accepted = cond(accepted.Type, false, string(gwv1.GatewayReasonListenersNotValid), "no listener is valid", gen)
	case invalid > 0:
		accepted = cond(accepted.Type, true, string(gwv1.GatewayReasonListenersNotValid), fmt.Sprintf("%d of %d listeners are not valid", invalid, invalid+valid), gen)
	}
	if gw.Spec.Infrastructure != nil && gw.Spec.Infrastructure.ParametersRef != nil {
		// HAPTIC takes no Gateway parameters: every reference is of an unsupported kind.
		ref := gw.Spec.Infrastructure.ParametersRef
		accepted = cond(accepted.Type, false, string(gwv1.GatewayReasonInvalidParameters),
			fmt.Sprintf("infrastructure.parametersRef %s/%s %s: HAPTIC supports no Gateway parameters", ref.Group, ref.Kind, ref.Name), gen)
	}
	for _, a := range gw.Spec.Addresses {
		if a.Type != nil && *a.Type != gwv1.IPAddressType {
			accepted = cond(accepted.Type, false, string(gwv1.GatewayReasonUnsupportedAddress),
				fmt.Sprintf("address type %s is not supported (IPAddress is)", *a.Type), gen)
		} else if !have[a.Value] || net.ParseIP(a.Value) == nil {
			programmed = cond(programmed.Type, false, string(gwv1.GatewayReasonAddressNotUsable),
				fmt.Sprintf("address %s is not an HAProxy pod address", a.Value), gen)
		}
	}
	switch {
	case programmed.Status == metav1.ConditionFalse:
	case accepted.Status == metav1.ConditionFalse:
		programmed = cond(programmed.Type, false, string(gwv1.GatewayReasonInvalid), "the Gateway is not accepted", gen)
	case len(addrs) == 0:
		programmed = cond(programmed.Type, false, string(gwv1.GatewayReasonAddressNotAssigned), "no HAProxy pod is running", gen)
	case !in.Programmed[key(gw.Namespace, gw.Name)]:
		programmed = cond(programmed.Type, false, string(gwv1.GatewayReasonPending),
			"waiting for the configuration to be live on an HAProxy pod", gen)
	}
	st.Conditions = []metav1.Condition{accepted, programmed}
	if n := attachedSets(g); gw.Spec.AllowedListeners != nil || n > 0 {
		st.AttachedListenerSets = &n
	}
	if c := insecureFallback(gw); c != nil {
		st.Conditions = append(st.Conditions, *c)
	}
	if c := backendClientCert(gw, in, grants); c != nil {
		st.Conditions = append(st.Conditions, *c)
	}
	return st
}

// gatewayAddresses are a Gateway's addresses: the data plane's, or with PerGateway
// those of its own pods only (see Input.PerGateway).
func gatewayAddresses(gw *gwv1.Gateway, in Input) []string {
	if !in.PerGateway {
		return sortedAddresses(in.Addresses)
	}
	if own, ok := in.GatewayAddresses[key(gw.Namespace, gw.Name)]; ok {
		return sortedAddresses(own)
	}
	var kept []string
	for _, a := range gw.Status.Addresses {
		kept = append(kept, a.Value)
	}
	return sortedAddresses(kept)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func groupPtr(g string) *gwv1.Group { x := gwv1.Group(g); return &x }
