package status

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TLS listeners (protocol TLS) carry TLSRoutes. Passthrough hands the client's TLS
// stream to the backend chosen by its SNI, without decrypting it: the listener
// needs no certificate. Terminate (the mode's default) decrypts with the
// listener's certificateRefs, checked as an HTTPS listener's are, and forwards the
// plain stream. Both modes may share a port (TLSRouteModeMixed): the library
// sends the Terminate listeners' SNIs on to an inner decrypting frontend.

func tlsBackendRefs(rt *gwv1.TLSRoute) []gwv1.BackendObjectReference {
	var out []gwv1.BackendObjectReference
	for _, rule := range rt.Spec.Rules {
		for _, b := range rule.BackendRefs {
			out = append(out, b.BackendObjectReference)
		}
	}
	return out
}

// tlsPassthrough reports whether a TLS listener passes TLS through.
func tlsPassthrough(l gwv1.Listener) bool {
	return l.TLS != nil && l.TLS.Mode != nil && *l.TLS.Mode == gwv1.TLSModePassthrough
}

// tlsListenerRefs checks a TLS listener's tls block: Passthrough needs nothing,
// Terminate the certificateRefs an HTTPS listener needs.
func tlsListenerRefs(o owner, l gwv1.Listener, in Input, grants grants) (bool, string, string) {
	if tlsPassthrough(l) {
		return true, string(gwv1.ListenerReasonResolvedRefs), ""
	}
	if l.TLS == nil || len(l.TLS.CertificateRefs) == 0 {
		return false, string(gwv1.ListenerReasonInvalidCertificateRef), "a TLS listener in mode Terminate needs tls.certificateRefs"
	}
	return certificateRefs(o, l, in, grants)
}
