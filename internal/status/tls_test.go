package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func tlsListener(name string, port int32, host string, mode gwv1.TLSModeType, certs ...string) gwv1.Listener {
	l := httpListener(name, port, host)
	l.Protocol = gwv1.TLSProtocolType
	l.TLS = &gwv1.ListenerTLSConfig{Mode: &mode}
	for _, c := range certs {
		l.TLS.CertificateRefs = append(l.TLS.CertificateRefs, gwv1.SecretObjectReference{Name: gwv1.ObjectName(c)})
	}
	return l
}

func tlsRoute(ns, name string, parents []gwv1.ParentReference, hosts []string, backends ...gwv1.BackendObjectReference) *gwv1.TLSRoute {
	rt := &gwv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 2}}
	rt.Spec.ParentRefs = parents
	for _, h := range hosts {
		rt.Spec.Hostnames = append(rt.Spec.Hostnames, gwv1.Hostname(h))
	}
	var refs []gwv1.BackendRef
	for _, b := range backends {
		refs = append(refs, gwv1.BackendRef{BackendObjectReference: b})
	}
	rt.Spec.Rules = []gwv1.TLSRouteRule{{BackendRefs: refs}}
	return rt
}

func listenerStatus(t *testing.T, st gwv1.GatewayStatus, name string) gwv1.ListenerStatus {
	t.Helper()
	for _, l := range st.Listeners {
		if string(l.Name) == name {
			return l
		}
	}
	t.Fatalf("no listener %s in %+v", name, st.Listeners)
	return gwv1.ListenerStatus{}
}

// TLS listeners carry TLSRoutes: Passthrough without certificates, Terminate with
// them; a route attaches where its hostnames intersect the listener's, and an
// HTTPRoute is not allowed on a TLS listener.
func TestTLSListenersAndRoutes(t *testing.T) {
	in := base()
	in.Gateways = []*gwv1.Gateway{gw("gw", "gw", "haptic",
		tlsListener("pass", 443, "*.example.com", gwv1.TLSModePassthrough),
		tlsListener("term", 8443, "", gwv1.TLSModeTerminate, "tls"),
		tlsListener("term-nocert", 9443, "", gwv1.TLSModeTerminate))}
	in.TLSRoutes = []*gwv1.TLSRoute{
		tlsRoute("gw", "abc", []gwv1.ParentReference{{Name: "gw", SectionName: ptr(gwv1.SectionName("pass"))}}, []string{"abc.example.com"}, svc("echo", 8080)),
		tlsRoute("gw", "elsewhere", []gwv1.ParentReference{{Name: "gw", SectionName: ptr(gwv1.SectionName("pass"))}}, []string{"abc.example.org"}, svc("echo", 8080)),
		tlsRoute("gw", "missing", []gwv1.ParentReference{parent("gw")}, nil, svc("nope", 8080)),
	}
	in.HTTPRoutes = append(in.HTTPRoutes, httpRoute("gw", "web", []gwv1.ParentReference{parent("gw")}, nil, svc("echo", 8080)))
	r := Compute(in)
	gst := r.Gateways[key("gw", "gw")]
	pass := listenerStatus(t, gst, "pass")
	wantCond(t, pass.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCond(t, pass.Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	if len(pass.SupportedKinds) != 1 || pass.SupportedKinds[0].Kind != KindTLSRoute {
		t.Errorf("supportedKinds = %+v, want TLSRoute only", pass.SupportedKinds)
	}
	if pass.AttachedRoutes != 2 { // abc, and missing (no hostnames: every listener)
		t.Errorf("pass: attachedRoutes = %d, want 2", pass.AttachedRoutes)
	}
	wantCond(t, listenerStatus(t, gst, "term").Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	wantCond(t, listenerStatus(t, gst, "term-nocert").Conditions, "ResolvedRefs", metav1.ConditionFalse, "InvalidCertificateRef")

	wantCond(t, r.TLSRoutes[key("gw", "abc")].Parents[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCond(t, r.TLSRoutes[key("gw", "elsewhere")].Parents[0].Conditions, "Accepted", metav1.ConditionFalse, "NoMatchingListenerHostname")
	wantCond(t, r.TLSRoutes[key("gw", "missing")].Parents[0].Conditions, "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound")
	wantCond(t, r.HTTPRoutes[key("gw", "web")].Parents[0].Conditions, "Accepted", metav1.ConditionFalse, "NotAllowedByListeners")
}

// Passthrough and Terminate listeners on one port (TLSRouteModeMixed) are both
// accepted, with TLSRoute as their kind; the same hostname in both modes conflicts.
func TestTLSMixedModesAccepted(t *testing.T) {
	in := base()
	in.Gateways = []*gwv1.Gateway{gw("gw", "gw", "haptic",
		tlsListener("term", 8443, "a.example.com", gwv1.TLSModeTerminate, "tls"),
		tlsListener("pass", 8443, "b.example.com", gwv1.TLSModePassthrough),
		tlsListener("pass-same-host", 8443, "a.example.com", gwv1.TLSModePassthrough))}
	gst := Compute(in).Gateways[key("gw", "gw")]
	for _, name := range []string{"term", "pass"} {
		ls := listenerStatus(t, gst, name)
		if name == "term" {
			wantCond(t, ls.Conditions, "Accepted", metav1.ConditionFalse, "HostnameConflict")
			continue
		}
		wantCond(t, ls.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
		wantCond(t, ls.Conditions, "Conflicted", metav1.ConditionFalse, "NoConflicts")
		if len(ls.SupportedKinds) != 1 || ls.SupportedKinds[0].Kind != "TLSRoute" {
			t.Errorf("%s: supportedKinds = %+v, want TLSRoute", name, ls.SupportedKinds)
		}
	}
	wantCond(t, listenerStatus(t, gst, "pass-same-host").Conditions, "Accepted", metav1.ConditionFalse, "HostnameConflict")
}
