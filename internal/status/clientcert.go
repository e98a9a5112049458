package status

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Frontend client certificate validation (Gateway spec.tls.frontend): an HTTPS
// listener's port takes its perPort entry, else the default. Each caCertificateRef
// must be a ConfigMap or a TLS Secret (core group) whose ca.crt holds PEM
// certificates, in the Gateway's namespace or allowed by a ReferenceGrant. One bad reference makes the
// listener's ResolvedRefs False (InvalidCACertificateKind, RefNotPermitted or
// InvalidCACertificateRef, the first problem's); with
// none usable the listener is not accepted either (NoValidCACertificate).

func frontendValidation(gw *gwv1.Gateway, port gwv1.PortNumber) *gwv1.FrontendTLSValidation {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil
	}
	v := gw.Spec.TLS.Frontend.Default.Validation
	for _, pp := range gw.Spec.TLS.Frontend.PerPort {
		if pp.Port == port {
			v = pp.TLS.Validation
		}
	}
	return v
}

// clientCARefs checks the CA references of an HTTPS listener's port: the reason
// and message of the first problem ("" when all resolve), and whether at least one
// resolves (or there is no validation).
func clientCARefs(gw *gwv1.Gateway, l gwv1.Listener, in Input, grants grants) (reason, msg string, usable bool) {
	v := frontendValidation(gw, l.Port)
	if v == nil || len(v.CACertificateRefs) == 0 {
		return "", "", true
	}
	var problems []string
	for _, ref := range v.CACertificateRefs {
		ns := gw.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		name := ns + "/" + string(ref.Name)
		bundles := in.CABundles
		if ref.Kind == "Secret" {
			bundles = in.SecretCABundles
		}
		switch {
		case ref.Group != "" || (ref.Kind != "ConfigMap" && ref.Kind != "Secret"):
			if reason == "" {
				reason = string(gwv1.ListenerReasonInvalidCACertificateKind)
			}
			problems = append(problems, fmt.Sprintf("caCertificateRef %s: kind %s is not supported (core ConfigMap and Secret are)",
				name, strings.TrimPrefix(string(ref.Group)+"/"+string(ref.Kind), "/")))
		case ns != gw.Namespace && !grants.allows(Group, KindGateway, gw.Namespace, "", string(ref.Kind), ns, string(ref.Name)):
			if reason == "" {
				reason = string(gwv1.ListenerReasonRefNotPermitted)
			}
			problems = append(problems, fmt.Sprintf("caCertificateRef %s: no ReferenceGrant allows it", name))
		case !bundles[key(ns, string(ref.Name))]:
			problems = append(problems, fmt.Sprintf("caCertificateRef %s: no such %s with PEM certificates in ca.crt", name, ref.Kind))
		default:
			usable = true
		}
	}
	if len(problems) == 0 {
		return "", "", true
	}
	if reason == "" {
		reason = string(gwv1.ListenerReasonInvalidCACertificateRef)
	}
	return reason, strings.Join(problems, "; "), usable
}

// insecureFallback is the Gateway's InsecureFrontendValidationMode condition when
// a port lets clients without a valid certificate in (AllowInsecureFallback).
func insecureFallback(gw *gwv1.Gateway) *metav1.Condition {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil
	}
	fr := gw.Spec.TLS.Frontend
	vs := []*gwv1.FrontendTLSValidation{fr.Default.Validation}
	for _, pp := range fr.PerPort {
		vs = append(vs, pp.TLS.Validation)
	}
	for _, v := range vs {
		if v != nil && v.Mode == gwv1.AllowInsecureFallback {
			c := cond(string(gwv1.GatewayConditionInsecureFrontendValidationMode), true,
				string(gwv1.GatewayReasonConfigurationChanged),
				"a port accepts clients without a valid certificate (AllowInsecureFallback)", gw.Generation)
			return &c
		}
	}
	return nil
}

// backendClientCert is the Gateway's ResolvedRefs condition when it names a
// client certificate for TLS backends (spec.tls.backend.clientCertificateRef): a
// TLS Secret in its namespace or allowed by a ReferenceGrant. Without one the
// Gateway has no such condition.
func backendClientCert(gw *gwv1.Gateway, in Input, grants grants) *metav1.Condition {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Backend == nil || gw.Spec.TLS.Backend.ClientCertificateRef == nil {
		return nil
	}
	ref := gw.Spec.TLS.Backend.ClientCertificateRef
	group, kind, ns := secretRefOf(*ref, gw.Namespace)
	name := ns + "/" + string(ref.Name)
	reason, msg := string(gwv1.GatewayReasonInvalidClientCertificateRef), ""
	switch {
	case group != "" || kind != "Secret":
		msg = fmt.Sprintf("clientCertificateRef %s: kind %s is not supported (core Secret is)", name, strings.TrimPrefix(group+"/"+kind, "/"))
	case ns != gw.Namespace && !grants.allows(Group, KindGateway, gw.Namespace, "", "Secret", ns, string(ref.Name)):
		reason, msg = string(gwv1.GatewayReasonRefNotPermitted), fmt.Sprintf("clientCertificateRef %s: no ReferenceGrant allows it", name)
	case !in.Secrets[key(ns, string(ref.Name))]:
		msg = fmt.Sprintf("clientCertificateRef %s: no such TLS Secret with a certificate and its key", name)
	default:
		reason = string(gwv1.GatewayReasonResolvedRefs)
	}
	c := cond(string(gwv1.GatewayConditionResolvedRefs), msg == "", reason, msg, gw.Generation)
	return &c
}
