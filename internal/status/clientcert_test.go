package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

func caRef(kind, name string) gwv1.ObjectReference {
	return gwv1.ObjectReference{Kind: gwv1.Kind(kind), Name: gwv1.ObjectName(name)}
}

// Client certificate validation per HTTPS port: a ConfigMap's or a TLS Secret's
// ca.crt resolves (a ConfigMap's name does not resolve a Secret reference); a
// port whose CA references all fail is not accepted (NoValidCACertificate); one with a bad and a good reference
// is accepted with ResolvedRefs False; AllowInsecureFallback shows on the Gateway.
func TestClientCertificateValidation(t *testing.T) {
	https := func(name string, port int32) gwv1.Listener {
		l := httpListener(name, port, "")
		l.Protocol = gwv1.HTTPSProtocolType
		l.TLS = &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{{Name: "tls"}}}
		return l
	}
	in := base()
	in.CABundles = map[types.NamespacedName]bool{{Namespace: "gw", Name: "ca"}: true, {Namespace: "gw", Name: "junk"}: false}
	in.SecretCABundles = map[types.NamespacedName]bool{{Namespace: "gw", Name: "ca-secret"}: true}
	g := gw("gw", "gw", "haptic", https("default", 443), https("missing", 7443), https("mixed", 8443), https("svc", 9443),
		https("secret", 10443), https("secret-missing", 10444), httpListener("http", 80, ""))
	g.Spec.TLS = &gwv1.GatewayTLSConfig{Frontend: &gwv1.FrontendTLSConfig{
		Default: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{caRef("ConfigMap", "ca")}}},
		PerPort: []gwv1.TLSPortConfig{
			{Port: 7443, TLS: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{caRef("ConfigMap", "nope"), caRef("ConfigMap", "junk")}}}},
			{Port: 8443, TLS: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{Mode: gwv1.AllowInsecureFallback,
				CACertificateRefs: []gwv1.ObjectReference{caRef("ConfigMap", "nope"), caRef("ConfigMap", "ca")}}}},
			{Port: 9443, TLS: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{caRef("Service", "echo")}}}},
			{Port: 10443, TLS: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{caRef("Secret", "ca-secret")}}}},
			{Port: 10444, TLS: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{caRef("Secret", "ca")}}}},
		}}}
	in.Gateways = []*gwv1.Gateway{g}
	st := Compute(in).Gateways[key("gw", "gw")]

	for _, name := range []string{"default", "secret"} {
		ok := listenerStatus(t, st, name)
		wantCond(t, ok.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
		wantCond(t, ok.Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	}
	for name, reason := range map[string]string{"missing": "InvalidCACertificateRef", "svc": "InvalidCACertificateKind",
		"secret-missing": "InvalidCACertificateRef"} {
		ls := listenerStatus(t, st, name)
		wantCond(t, ls.Conditions, "Accepted", metav1.ConditionFalse, "NoValidCACertificate")
		wantCond(t, ls.Conditions, "ResolvedRefs", metav1.ConditionFalse, reason)
		wantCond(t, ls.Conditions, "Programmed", metav1.ConditionFalse, "Invalid")
	}
	mixed := listenerStatus(t, st, "mixed")
	wantCond(t, mixed.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCond(t, mixed.Conditions, "ResolvedRefs", metav1.ConditionFalse, "InvalidCACertificateRef")
	wantCond(t, listenerStatus(t, st, "http").Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCond(t, st.Conditions, "InsecureFrontendValidationMode", metav1.ConditionTrue, "ConfigurationChanged")
}

// A Gateway's backend client certificate: a TLS Secret of its namespace, or of
// another one a ReferenceGrant allows, resolves; anything else makes the
// Gateway's ResolvedRefs False (and it stays accepted); without one there is no
// such condition.
func TestBackendClientCertificate(t *testing.T) {
	ref := func(group, kind, ns, name string) *gwv1.SecretObjectReference {
		r := &gwv1.SecretObjectReference{Name: gwv1.ObjectName(name)}
		if group != "-" {
			g := gwv1.Group(group)
			r.Group = &g
		}
		if kind != "" {
			k := gwv1.Kind(kind)
			r.Kind = &k
		}
		if ns != "" {
			n := gwv1.Namespace(ns)
			r.Namespace = &n
		}
		return r
	}
	for _, tc := range []struct {
		name       string
		ref        *gwv1.SecretObjectReference
		grant      bool
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{"same namespace", ref("", "Secret", "", "client"), false, metav1.ConditionTrue, "ResolvedRefs"},
		{"defaults", ref("-", "", "", "client"), false, metav1.ConditionTrue, "ResolvedRefs"},
		{"missing", ref("", "Secret", "", "nope"), false, metav1.ConditionFalse, "InvalidClientCertificateRef"},
		{"not a TLS secret", ref("", "Secret", "", "opaque"), false, metav1.ConditionFalse, "InvalidClientCertificateRef"},
		{"other group", ref("example.com", "Secret", "", "client"), false, metav1.ConditionFalse, "InvalidClientCertificateRef"},
		{"other kind", ref("", "ConfigMap", "", "client"), false, metav1.ConditionFalse, "InvalidClientCertificateRef"},
		{"other namespace, no grant", ref("", "Secret", "certs", "client"), false, metav1.ConditionFalse, "RefNotPermitted"},
		{"other namespace, granted", ref("", "Secret", "certs", "client"), true, metav1.ConditionTrue, "ResolvedRefs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			in.Secrets = map[types.NamespacedName]bool{{Namespace: "gw", Name: "client"}: true, {Namespace: "certs", Name: "client"}: true,
				{Namespace: "gw", Name: "opaque"}: false}
			if tc.grant {
				in.ReferenceGrants = []*gwv1beta1.ReferenceGrant{grant("certs", Group, "Gateway", "gw", "", "Secret")}
			}
			g := gw("gw", "gw", "haptic", httpListener("http", 80, ""))
			g.Spec.TLS = &gwv1.GatewayTLSConfig{Backend: &gwv1.GatewayBackendTLS{ClientCertificateRef: tc.ref}}
			in.Gateways = []*gwv1.Gateway{g}
			st := Compute(in).Gateways[key("gw", "gw")]
			wantCond(t, st.Conditions, "ResolvedRefs", tc.wantStatus, tc.wantReason)
			wantCond(t, st.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
		})
	}
	in := base()
	in.Gateways = []*gwv1.Gateway{gw("gw", "gw", "haptic", httpListener("http", 80, ""))}
	for _, c := range Compute(in).Gateways[key("gw", "gw")].Conditions {
		if c.Type == "ResolvedRefs" {
			t.Errorf("a Gateway without a backend client certificate has a ResolvedRefs condition: %+v", c)
		}
	}
}
