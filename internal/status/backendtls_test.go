package status

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func btlsPolicy(name, service, section string, age int, refs ...gwv1.LocalObjectReference) *gwv1.BackendTLSPolicy {
	p := &gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: name, Generation: 5,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Duration(age) * time.Hour))}}
	t := gwv1.LocalPolicyTargetReferenceWithSectionName{LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: gwv1.ObjectName(service)}}
	if section != "" {
		t.SectionName = ptr(gwv1.SectionName(section))
	}
	p.Spec.TargetRefs = []gwv1.LocalPolicyTargetReferenceWithSectionName{t}
	p.Spec.Validation = gwv1.BackendTLSPolicyValidation{CACertificateRefs: refs, Hostname: "echo.internal"}
	return p
}

func cmRef(kind, name string) gwv1.LocalObjectReference {
	return gwv1.LocalObjectReference{Kind: gwv1.Kind(kind), Name: gwv1.ObjectName(name)}
}

// BackendTLSPolicy status per ancestor Gateway: the spec's reasons for bad CA
// references, conflicts on one target (older wins, sectionName targets apart),
// what HAProxy 2.6 cannot verify, and other controllers' ancestors kept.
func TestBackendTLSPolicyStatus(t *testing.T) {
	in := base()
	in.CABundles = map[types.NamespacedName]bool{{Namespace: "gw", Name: "ca"}: true, {Namespace: "gw", Name: "junk"}: false}
	in.HTTPRoutes = []*gwv1.HTTPRoute{httpRoute("gw", "r", []gwv1.ParentReference{parent("gw")}, nil, svc("echo", 8080), svc("api", 8080))}
	system := gwv1.WellKnownCACertificatesSystem
	custom := gwv1.WellKnownCACertificatesType("example.com/cas")
	sysPolicy := btlsPolicy("system", "api", "http", 9)
	sysPolicy.Spec.Validation.WellKnownCACertificates = &system
	customPolicy := btlsPolicy("custom", "api", "grpc", 9)
	customPolicy.Spec.Validation.WellKnownCACertificates = &custom
	uri := btlsPolicy("uri", "api", "metrics", 9, cmRef("ConfigMap", "ca"))
	uri.Spec.Validation.SubjectAltNames = []gwv1.SubjectAltName{{Type: gwv1.URISubjectAltNameType, URI: "spiffe://c/echo"}}
	oneSAN := btlsPolicy("one-san", "api", "admin", 9, cmRef("ConfigMap", "ca"))
	oneSAN.Spec.Validation.SubjectAltNames = []gwv1.SubjectAltName{{Type: gwv1.HostnameSubjectAltNameType, Hostname: "api.example.com"}}
	foreign := btlsPolicy("foreign", "echo", "other", 9, cmRef("ConfigMap", "ca"))
	foreign.Status.Ancestors = []gwv1.PolicyAncestorStatus{{ControllerName: "example.com/other", AncestorRef: parent("theirs")}}
	unused := btlsPolicy("unused", "nobody", "", 9, cmRef("ConfigMap", "ca"))
	unused.Status.Ancestors = []gwv1.PolicyAncestorStatus{{ControllerName: ControllerName, AncestorRef: parent("gw")}}
	in.BackendTLSPolicies = []*gwv1.BackendTLSPolicy{
		btlsPolicy("good", "echo", "", 10, cmRef("ConfigMap", "ca")),
		btlsPolicy("younger", "echo", "", 5, cmRef("ConfigMap", "ca")),
		btlsPolicy("section", "echo", "http", 1, cmRef("ConfigMap", "ca")),
		btlsPolicy("missing", "api", "", 9, cmRef("ConfigMap", "nope")),
		btlsPolicy("malformed", "api", "a", 9, cmRef("ConfigMap", "junk")),
		btlsPolicy("kind", "api", "b", 9, cmRef("Secret", "ca")),
		btlsPolicy("mixed", "api", "c", 9, cmRef("ConfigMap", "nope"), cmRef("ConfigMap", "ca")),
		sysPolicy, customPolicy, uri, oneSAN, foreign, unused,
	}
	res := Compute(in).BackendTLSPolicies
	for _, tc := range []struct {
		name                     string
		accepted                 metav1.ConditionStatus
		acceptedReason, resolved string
	}{
		{"good", metav1.ConditionTrue, "Accepted", "ResolvedRefs"},
		{"younger", metav1.ConditionFalse, "Conflicted", "ResolvedRefs"},
		{"section", metav1.ConditionTrue, "Accepted", "ResolvedRefs"},
		{"missing", metav1.ConditionFalse, "NoValidCACertificate", "InvalidCACertificateRef"},
		{"malformed", metav1.ConditionFalse, "NoValidCACertificate", "InvalidCACertificateRef"},
		{"kind", metav1.ConditionFalse, "NoValidCACertificate", "InvalidKind"},
		{"mixed", metav1.ConditionTrue, "Accepted", "InvalidCACertificateRef"},
		{"system", metav1.ConditionTrue, "Accepted", "ResolvedRefs"},
		{"custom", metav1.ConditionFalse, "Invalid", "ResolvedRefs"},
		{"uri", metav1.ConditionFalse, "Invalid", "ResolvedRefs"},
		{"one-san", metav1.ConditionTrue, "Accepted", "ResolvedRefs"},
	} {
		st, ok := res[key("gw", tc.name)]
		if !ok || len(st.Ancestors) != 1 {
			t.Fatalf("%s: status %+v, want one ancestor", tc.name, st)
		}
		a := st.Ancestors[0]
		if a.ControllerName != ControllerName || a.AncestorRef.Name != "gw" || *a.AncestorRef.Namespace != "gw" || *a.AncestorRef.Kind != "Gateway" {
			t.Errorf("%s: ancestor %+v", tc.name, a)
		}
		wantCond(t, a.Conditions, "Accepted", tc.accepted, tc.acceptedReason)
		rs := metav1.ConditionTrue
		if tc.resolved != "ResolvedRefs" {
			rs = metav1.ConditionFalse
		}
		wantCond(t, a.Conditions, "ResolvedRefs", rs, tc.resolved)
		if g := condOf(t, a.Conditions, "Accepted").ObservedGeneration; g != 5 {
			t.Errorf("%s: observedGeneration %d, want 5", tc.name, g)
		}
	}
	if st := res[key("gw", "foreign")]; len(st.Ancestors) != 2 || st.Ancestors[0].ControllerName != "example.com/other" {
		t.Errorf("foreign: %+v, want the other controller's ancestor kept and ours added", st.Ancestors)
	}
	if st, ok := res[key("gw", "unused")]; !ok || len(st.Ancestors) != 0 {
		t.Errorf("unused: %+v (ok %v), want our stale ancestor removed", st, ok)
	}
}
