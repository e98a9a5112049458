package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func caRef(kind, name string) gwv1.ObjectReference {
	return gwv1.ObjectReference{Kind: gwv1.Kind(kind), Name: gwv1.ObjectName(name)}
}

// Client certificate validation per HTTPS port: a port whose CA references all
// fail is not accepted (NoValidCACertificate); one with a bad and a good reference
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
	g := gw("gw", "gw", "haptic", https("default", 443), https("missing", 7443), https("mixed", 8443), https("svc", 9443), httpListener("http", 80, ""))
	g.Spec.TLS = &gwv1.GatewayTLSConfig{Frontend: &gwv1.FrontendTLSConfig{
		Default: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{caRef("ConfigMap", "ca")}}},
		PerPort: []gwv1.TLSPortConfig{
			{Port: 7443, TLS: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{caRef("ConfigMap", "nope"), caRef("ConfigMap", "junk")}}}},
			{Port: 8443, TLS: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{Mode: gwv1.AllowInsecureFallback,
				CACertificateRefs: []gwv1.ObjectReference{caRef("ConfigMap", "nope"), caRef("ConfigMap", "ca")}}}},
			{Port: 9443, TLS: gwv1.TLSConfig{Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{caRef("Service", "echo")}}}},
		}}}
	in.Gateways = []*gwv1.Gateway{g}
	st := Compute(in).Gateways[key("gw", "gw")]

	ok := listenerStatus(t, st, "default")
	wantCond(t, ok.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCond(t, ok.Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	for name, reason := range map[string]string{"missing": "InvalidCACertificateRef", "svc": "InvalidCACertificateKind"} {
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
