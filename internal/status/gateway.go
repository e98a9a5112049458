package status

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/haproxy-haptic/haptic/internal/note"
)

// ControllerName is the GatewayClass spec.controllerName HAPTIC serves.
const ControllerName gwv1.GatewayController = "haproxy-haptic.org/controller"

// SupportedBundleVersions are the Gateway API release lines whose CRDs HAPTIC
// supports: v1.6 (the Go types and the conformance suite), and v1.4 and v1.5 so
// that a controller upgrade before the CRD upgrade keeps every class Accepted
// (their fields are a subset of v1.6's).
var SupportedBundleVersions = []string{"v1.4.", "v1.5.", "v1.6."}

func supportedBundle(bundle string) bool {
	for _, v := range SupportedBundleVersions {
		if strings.HasPrefix(bundle, v) {
			return true
		}
	}
	return false
}

// Group is the Gateway API group.
const Group = gwv1.GroupName

// Route kinds.
const (
	KindHTTPRoute = "HTTPRoute"
	KindGRPCRoute = "GRPCRoute"
	KindTLSRoute  = "TLSRoute"
	KindGateway   = "Gateway"
	// KindListenerSet: listeners attached to a Gateway from another object.
	KindListenerSet = "ListenerSet"
)

// Input is the cluster state the Gateway API status is computed from.
type Input struct {
	ControllerName gwv1.GatewayController
	// SupportedFeatures are the features the libraries claim
	// (spec.gateways.supportedFeatures): every served GatewayClass lists them.
	SupportedFeatures []string
	GatewayClasses    []*gwv1.GatewayClass
	Gateways          []*gwv1.Gateway
	HTTPRoutes        []*gwv1.HTTPRoute
	GRPCRoutes        []*gwv1.GRPCRoute
	TLSRoutes         []*gwv1.TLSRoute
	ListenerSets      []*gwv1.ListenerSet
	ReferenceGrants   []*gwv1beta1.ReferenceGrant
	// BackendTLSPolicies: their status per ancestor Gateway (backendtls.go).
	BackendTLSPolicies []*gwv1.BackendTLSPolicy
	// Services holds the existing Services and their ports.
	Services map[types.NamespacedName][]int32
	// Secrets holds the existing TLS Secrets (type kubernetes.io/tls): true when
	// tls.crt and tls.key hold a certificate and its key.
	Secrets map[types.NamespacedName]bool
	// CABundles holds the existing ConfigMaps: true when ca.crt holds PEM
	// certificates (caCertificateRefs of client certificate validation and of
	// BackendTLSPolicies).
	CABundles map[types.NamespacedName]bool
	// SecretCABundles holds the TLS Secrets whose ca.crt holds PEM certificates
	// (caCertificateRefs of client certificate validation may name them).
	SecretCABundles map[types.NamespacedName]bool
	// Namespaces holds every namespace's labels (allowedRoutes selectors).
	Namespaces map[string]map[string]string
	// Addresses are the data plane's addresses (the podSelector's HAProxy pod IPs):
	// every Gateway's unless PerGateway.
	Addresses []string
	// PerGateway: every Gateway has HAProxy pods of its own (per-Gateway
	// provisioning) and only their addresses are its. A Gateway's addresses are then
	// its GatewayAddresses entry; one without an entry (its pods not discovered yet:
	// a new Gateway, a controller that just started) keeps the addresses its status
	// already carries — none for a new Gateway, never the podSelector's Addresses.
	PerGateway bool
	// GatewayAddresses are the IPs of each Gateway's own pods (PerGateway).
	GatewayAddresses map[types.NamespacedName][]string
	// Programmed says which Gateways' configuration is live on at least one of
	// their HAProxy pods.
	Programmed map[types.NamespacedName]bool
	// Notes are what the templates said about the objects they rendered (note()).
	// A Gateway listener with a PortUnavailable note was left out of the
	// configuration because another Gateway or the base library holds its port: it
	// is not accepted, with the note's message. Notes with other reasons repeat what
	// the computation finds itself from the objects and are not read.
	Notes []note.Note
	// BundleVersion is the gateway.networking.k8s.io/bundle-version annotation of
	// the installed CRDs; empty: unknown (no SupportedVersion condition).
	BundleVersion string

	portTaken map[string]map[string]string // from Notes, by Compute
}

// portTaken indexes the PortUnavailable notes on Gateway and ListenerSet
// listeners: "<kind> <namespace>/<name>" → listener → message.
func portTaken(notes []note.Note) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, n := range notes {
		if (n.Kind != KindGateway && n.Kind != KindListenerSet) || n.Section == "" || n.Reason != string(gwv1.ListenerReasonPortUnavailable) {
			continue
		}
		gw := n.Kind + " " + n.Namespace + "/" + n.Name
		if out[gw] == nil {
			out[gw] = map[string]string{}
		}
		out[gw][n.Section] = n.Message
	}
	return out
}

// Result is the desired status of every object HAPTIC owns. Conditions carry no
// lastTransitionTime: Merge sets it against the current status.
type Result struct {
	GatewayClasses map[string]gwv1.GatewayClassStatus
	Gateways       map[types.NamespacedName]gwv1.GatewayStatus
	HTTPRoutes     map[types.NamespacedName]gwv1.RouteStatus
	GRPCRoutes     map[types.NamespacedName]gwv1.RouteStatus
	TLSRoutes      map[types.NamespacedName]gwv1.RouteStatus
	// ListenerSets whose parentRef names one of our Gateways.
	ListenerSets map[types.NamespacedName]gwv1.ListenerSetStatus
	// BackendTLSPolicies holds the whole status: other controllers' ancestors kept.
	BackendTLSPolicies map[types.NamespacedName]gwv1.PolicyStatus
}

// listener is a Gateway listener with what the computation found out about it.
type listener struct {
	spec     gwv1.Listener
	ns       string                // the namespace of the object declaring it (allowedRoutes Same)
	kinds    []gwv1.RouteGroupKind // supported kinds
	valid    bool                  // routes may attach
	refsOK   bool                  // ResolvedRefs
	attached map[string]bool       // kind/namespace/name of attached routes
	status   gwv1.ListenerStatus
}

type gateway struct {
	gw        *gwv1.Gateway
	listeners []*listener
	sets      []*listenerSet // admitted ListenerSets, in order of precedence
}

// Compute returns the desired status of the input's objects owned by in.ControllerName.
// Routes appear in the result when one of their parentRefs names one of our Gateways
// or when their current status holds an entry of ours (that entry is then removed);
// entries of other controllers are kept as they are.
func Compute(in Input) Result {
	if in.ControllerName == "" {
		in.ControllerName = ControllerName
	}
	r := Result{
		GatewayClasses: map[string]gwv1.GatewayClassStatus{},
		Gateways:       map[types.NamespacedName]gwv1.GatewayStatus{},
		HTTPRoutes:     map[types.NamespacedName]gwv1.RouteStatus{},
		GRPCRoutes:     map[types.NamespacedName]gwv1.RouteStatus{},
		TLSRoutes:      map[types.NamespacedName]gwv1.RouteStatus{},
		ListenerSets:   map[types.NamespacedName]gwv1.ListenerSetStatus{},
	}
	classes := map[string]bool{}
	for _, gc := range in.GatewayClasses {
		if gc.Spec.ControllerName != in.ControllerName {
			continue
		}
		st := gatewayClassStatus(gc, in.BundleVersion, in.SupportedFeatures)
		r.GatewayClasses[gc.Name] = st
		classes[gc.Name] = st.Conditions[0].Status == metav1.ConditionTrue
	}
	grants := newGrants(in.ReferenceGrants)
	in.portTaken = portTaken(in.Notes)
	gateways := map[types.NamespacedName]*gateway{}
	for _, gw := range in.Gateways {
		if !classes[string(gw.Spec.GatewayClassName)] {
			continue
		}
		gateways[key(gw.Namespace, gw.Name)] = newGateway(gw, in, grants)
	}
	sets := attachListenerSets(in, gateways, grants)
	parents := parents{gateways: gateways, sets: sets}
	for _, rt := range in.HTTPRoutes {
		if st, ok := routeStatus(route{kind: KindHTTPRoute, meta: rt.ObjectMeta, spec: rt.Spec.CommonRouteSpec,
			hostnames: rt.Spec.Hostnames, status: rt.Status.RouteStatus, refs: httpBackendRefs(rt), unsupported: httpUnsupported(rt)},
			in, parents, grants); ok {
			r.HTTPRoutes[key(rt.Namespace, rt.Name)] = st
		}
	}
	for _, rt := range in.GRPCRoutes {
		if st, ok := routeStatus(route{kind: KindGRPCRoute, meta: rt.ObjectMeta, spec: rt.Spec.CommonRouteSpec,
			hostnames: rt.Spec.Hostnames, status: rt.Status.RouteStatus, refs: grpcBackendRefs(rt), unsupported: grpcUnsupported(rt)},
			in, parents, grants); ok {
			r.GRPCRoutes[key(rt.Namespace, rt.Name)] = st
		}
	}
	for _, rt := range in.TLSRoutes {
		if st, ok := routeStatus(route{kind: KindTLSRoute, meta: rt.ObjectMeta, spec: rt.Spec.CommonRouteSpec,
			hostnames: rt.Spec.Hostnames, status: rt.Status.RouteStatus, refs: tlsBackendRefs(rt)},
			in, parents, grants); ok {
			r.TLSRoutes[key(rt.Namespace, rt.Name)] = st
		}
	}
	for k, g := range gateways {
		r.Gateways[k] = gatewayStatus(g, in, grants)
	}
	for k, s := range sets {
		gwAccepted := meta.IsStatusConditionTrue(r.Gateways[key(s.gw.gw.Namespace, s.gw.gw.Name)].Conditions, string(gwv1.GatewayConditionAccepted))
		r.ListenerSets[k] = listenerSetStatus(s, gwAccepted, in)
	}
	r.BackendTLSPolicies = backendTLSPolicyStatus(in, gateways)
	return r
}

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

func cond(typ string, ok bool, reason, msg string, gen int64) metav1.Condition {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen}
}

func gatewayClassStatus(gc *gwv1.GatewayClass, bundle string, features []string) gwv1.GatewayClassStatus {
	accepted := cond(string(gwv1.GatewayClassConditionStatusAccepted), true, string(gwv1.GatewayClassReasonAccepted),
		"HAPTIC serves this class", gc.Generation)
	st := gwv1.GatewayClassStatus{Conditions: []metav1.Condition{accepted}, SupportedFeatures: supportedFeatures(features)}
	if bundle == "" {
		return st
	}
	if supportedBundle(bundle) {
		st.Conditions = append(st.Conditions, cond(string(gwv1.GatewayClassConditionStatusSupportedVersion), true,
			string(gwv1.GatewayClassReasonSupportedVersion), "Gateway API "+bundle+" is supported", gc.Generation))
		return st
	}
	msg := fmt.Sprintf("Gateway API CRDs %s are not supported (supported: %sx)", bundle, strings.Join(SupportedBundleVersions, "x, "))
	st.Conditions[0] = cond(string(gwv1.GatewayClassConditionStatusAccepted), false, string(gwv1.GatewayClassReasonUnsupportedVersion), msg, gc.Generation)
	st.Conditions = append(st.Conditions, cond(string(gwv1.GatewayClassConditionStatusSupportedVersion), false,
		string(gwv1.GatewayClassReasonUnsupportedVersion), msg, gc.Generation))
	return st
}

// supportedFeatures is the claim as the API wants it: sorted, without duplicates
// (the field is a set of at most 64 entries, so more are cut off).
func supportedFeatures(names []string) []gwv1.SupportedFeature {
	sorted := slices.Compact(slices.Sorted(slices.Values(names)))
	sorted = slices.DeleteFunc(sorted, func(n string) bool { return n == "" })
	if len(sorted) > 64 {
		sorted = sorted[:64]
	}
	out := make([]gwv1.SupportedFeature, 0, len(sorted))
	for _, n := range sorted {
		out = append(out, gwv1.SupportedFeature{Name: gwv1.FeatureName(n)})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
