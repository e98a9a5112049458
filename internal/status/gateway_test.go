package status

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/haproxy-haptic/haptic/internal/note"
)

func ptr[T any](v T) *T { return &v }

func class(name string, ctrl gwv1.GatewayController) *gwv1.GatewayClass {
	return &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Spec: gwv1.GatewayClassSpec{ControllerName: ctrl}}
}

func httpListener(name string, port int32, host string) gwv1.Listener {
	l := gwv1.Listener{Name: gwv1.SectionName(name), Port: gwv1.PortNumber(port), Protocol: gwv1.HTTPProtocolType}
	if host != "" {
		l.Hostname = ptr(gwv1.Hostname(host))
	}
	return l
}

func gw(ns, name, cls string, ls ...gwv1.Listener) *gwv1.Gateway {
	return &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 3},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(cls), Listeners: ls}}
}

func parent(name string) gwv1.ParentReference {
	return gwv1.ParentReference{Name: gwv1.ObjectName(name)}
}

func httpRoute(ns, name string, parents []gwv1.ParentReference, hosts []string, backends ...gwv1.BackendObjectReference) *gwv1.HTTPRoute {
	rt := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 7}}
	rt.Spec.ParentRefs = parents
	for _, h := range hosts {
		rt.Spec.Hostnames = append(rt.Spec.Hostnames, gwv1.Hostname(h))
	}
	var refs []gwv1.HTTPBackendRef
	for _, b := range backends {
		refs = append(refs, gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: b}})
	}
	rt.Spec.Rules = []gwv1.HTTPRouteRule{{BackendRefs: refs}}
	return rt
}

func svc(name string, port int32) gwv1.BackendObjectReference {
	return gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: ptr(gwv1.PortNumber(port))}
}

// base is a cluster with our class, Gateway gw/gw (listener "http" on 80) and
// Service default/echo:8080.
func base() Input {
	return Input{
		GatewayClasses: []*gwv1.GatewayClass{class("haptic", ControllerName), class("other", "example.com/other")},
		Gateways:       []*gwv1.Gateway{gw("gw", "gw", "haptic", httpListener("http", 80, ""))},
		Services:       map[types.NamespacedName][]int32{{Namespace: "gw", Name: "echo"}: {8080}, {Namespace: "apps", Name: "echo"}: {8080}},
		Secrets:        map[types.NamespacedName]bool{{Namespace: "gw", Name: "tls"}: true, {Namespace: "certs", Name: "tls"}: true},
		Namespaces:     map[string]map[string]string{"gw": {"team": "gw"}, "apps": {"team": "a"}, "other": {"team": "b"}},
		Addresses:      []string{"10.244.0.9", "10.244.0.3"},
		Programmed:     map[types.NamespacedName]bool{{Namespace: "gw", Name: "gw"}: true},
	}
}

func condOf(t *testing.T, conds []metav1.Condition, typ string) metav1.Condition {
	t.Helper()
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	t.Fatalf("no condition %s in %+v", typ, conds)
	return metav1.Condition{}
}

func wantCond(t *testing.T, conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	c := condOf(t, conds, typ)
	if c.Status != status || c.Reason != reason {
		t.Errorf("%s = %s/%s (%s), want %s/%s", typ, c.Status, c.Reason, c.Message, status, reason)
	}
}

func TestGatewayClass(t *testing.T) {
	for _, tc := range []struct {
		name, bundle     string
		accepted         metav1.ConditionStatus
		acceptedReason   string
		supported        metav1.ConditionStatus // "" = no condition
		supportedReasons string
	}{
		{"unknown bundle", "", metav1.ConditionTrue, "Accepted", "", ""},
		{"supported bundle", "v1.6.3", metav1.ConditionTrue, "Accepted", metav1.ConditionTrue, "SupportedVersion"},
		{"previous bundle (CRDs not upgraded yet)", "v1.4.1", metav1.ConditionTrue, "Accepted", metav1.ConditionTrue, "SupportedVersion"},
		{"unsupported bundle", "v1.2.0", metav1.ConditionFalse, "UnsupportedVersion", metav1.ConditionFalse, "UnsupportedVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			in.BundleVersion = tc.bundle
			r := Compute(in)
			if _, ok := r.GatewayClasses["other"]; ok {
				t.Error("another controller's class got a status")
			}
			st := r.GatewayClasses["haptic"]
			wantCond(t, st.Conditions, "Accepted", tc.accepted, tc.acceptedReason)
			if st.Conditions[0].ObservedGeneration != 1 {
				t.Errorf("observedGeneration = %d", st.Conditions[0].ObservedGeneration)
			}
			if tc.supported == "" {
				if len(st.Conditions) != 1 {
					t.Errorf("conditions = %+v", st.Conditions)
				}
				return
			}
			wantCond(t, st.Conditions, "SupportedVersion", tc.supported, tc.supportedReasons)
		})
	}
}

// The libraries' claim becomes every served class's supportedFeatures: sorted,
// each once; without a claim the field stays empty.
func TestGatewayClassSupportedFeatures(t *testing.T) {
	in := base()
	if got := Compute(in).GatewayClasses["haptic"].SupportedFeatures; got != nil {
		t.Errorf("no claim: supportedFeatures = %v", got)
	}
	in.SupportedFeatures = []string{"TLSRoute", "HTTPRoute", "Gateway", "HTTPRoute", ""}
	got := Compute(in).GatewayClasses["haptic"].SupportedFeatures
	var names []string
	for _, f := range got {
		names = append(names, string(f.Name))
	}
	if want := "Gateway,HTTPRoute,TLSRoute"; strings.Join(names, ",") != want {
		t.Errorf("supportedFeatures = %v, want %s", names, want)
	}
}

func TestGateway(t *testing.T) {
	gk := types.NamespacedName{Namespace: "gw", Name: "gw"}
	https := func(name string, port int32, host string, refs ...gwv1.SecretObjectReference) gwv1.Listener {
		l := httpListener(name, port, host)
		l.Protocol = gwv1.HTTPSProtocolType
		l.TLS = &gwv1.ListenerTLSConfig{CertificateRefs: refs}
		return l
	}
	secret := func(ns, name string) gwv1.SecretObjectReference {
		r := gwv1.SecretObjectReference{Name: gwv1.ObjectName(name)}
		if ns != "" {
			r.Namespace = ptr(gwv1.Namespace(ns))
		}
		return r
	}
	type lw struct { // expected listener conditions: type → status/reason
		accepted, resolved, programmed, conflicted string
	}
	for _, tc := range []struct {
		name       string
		listeners  []gwv1.Listener
		mutate     func(*Input)
		accepted   string // status/reason
		programmed string
		listener   []lw
	}{
		{name: "programmed", listeners: []gwv1.Listener{httpListener("http", 80, "")},
			accepted: "True/Accepted", programmed: "True/Programmed",
			listener: []lw{{"True/Accepted", "True/ResolvedRefs", "True/Programmed", "False/NoConflicts"}}},
		{name: "not yet programmed", listeners: []gwv1.Listener{httpListener("http", 80, "")},
			mutate:   func(in *Input) { in.Programmed = nil },
			accepted: "True/Accepted", programmed: "False/Pending",
			listener: []lw{{"True/Accepted", "True/ResolvedRefs", "False/Pending", "False/NoConflicts"}}},
		{name: "no data plane", listeners: []gwv1.Listener{httpListener("http", 80, "")},
			mutate:   func(in *Input) { in.Addresses = nil },
			accepted: "True/Accepted", programmed: "False/AddressNotAssigned",
			listener: []lw{{"True/Accepted", "True/ResolvedRefs", "True/Programmed", "False/NoConflicts"}}},
		{name: "unsupported protocol", listeners: []gwv1.Listener{httpListener("http", 80, ""), {Name: "tcp", Port: 9000, Protocol: gwv1.TCPProtocolType}},
			accepted: "True/ListenersNotValid", programmed: "True/Programmed",
			listener: []lw{{"True/Accepted", "True/ResolvedRefs", "True/Programmed", "False/NoConflicts"},
				{"False/UnsupportedProtocol", "True/ResolvedRefs", "False/Invalid", "False/NoConflicts"}}},
		{name: "only invalid listeners", listeners: []gwv1.Listener{{Name: "udp", Port: 53, Protocol: gwv1.UDPProtocolType}},
			accepted: "False/ListenersNotValid", programmed: "False/Invalid",
			listener: []lw{{"False/UnsupportedProtocol", "True/ResolvedRefs", "False/Invalid", "False/NoConflicts"}}},
		{name: "https with a valid certificate", listeners: []gwv1.Listener{https("https", 443, "", secret("", "tls"))},
			accepted: "True/Accepted", programmed: "True/Programmed",
			listener: []lw{{"True/Accepted", "True/ResolvedRefs", "True/Programmed", "False/NoConflicts"}}},
		{name: "https without certificateRefs", listeners: []gwv1.Listener{https("https", 443, "")},
			accepted: "True/Accepted", programmed: "True/Programmed",
			listener: []lw{{"True/Accepted", "False/InvalidCertificateRef", "False/Invalid", "False/NoConflicts"}}},
		{name: "https with a missing secret", listeners: []gwv1.Listener{https("https", 443, "", secret("", "nope"))},
			accepted: "True/Accepted", programmed: "True/Programmed",
			listener: []lw{{"True/Accepted", "False/InvalidCertificateRef", "False/Invalid", "False/NoConflicts"}}},
		{name: "https with a wrong kind", listeners: []gwv1.Listener{https("https", 443, "", gwv1.SecretObjectReference{Kind: ptr(gwv1.Kind("ConfigMap")), Name: "tls"})},
			accepted: "True/Accepted", programmed: "True/Programmed",
			listener: []lw{{"True/Accepted", "False/InvalidCertificateRef", "False/Invalid", "False/NoConflicts"}}},
		{name: "cross-namespace certificate without grant", listeners: []gwv1.Listener{https("https", 443, "", secret("certs", "tls"))},
			accepted: "True/Accepted", programmed: "True/Programmed",
			listener: []lw{{"True/Accepted", "False/RefNotPermitted", "False/Invalid", "False/NoConflicts"}}},
		{name: "cross-namespace certificate with grant", listeners: []gwv1.Listener{https("https", 443, "", secret("certs", "tls"))},
			mutate: func(in *Input) {
				in.ReferenceGrants = []*gwv1beta1.ReferenceGrant{grant("certs", "gateway.networking.k8s.io", "Gateway", "gw", "", "Secret")}
			},
			accepted: "True/Accepted", programmed: "True/Programmed",
			listener: []lw{{"True/Accepted", "True/ResolvedRefs", "True/Programmed", "False/NoConflicts"}}},
		{name: "invalid route kinds", listeners: []gwv1.Listener{func() gwv1.Listener {
			l := httpListener("http", 80, "")
			l.AllowedRoutes = &gwv1.AllowedRoutes{Kinds: []gwv1.RouteGroupKind{{Kind: "HTTPRoute"}, {Kind: "TCPRoute"}}}
			return l
		}()},
			accepted: "True/Accepted", programmed: "True/Programmed",
			listener: []lw{{"True/Accepted", "False/InvalidRouteKinds", "False/Invalid", "False/NoConflicts"}}},
		{name: "hostname conflict", listeners: []gwv1.Listener{httpListener("a", 80, "x.example.com"), httpListener("b", 80, "x.example.com"), httpListener("c", 80, "y.example.com")},
			accepted: "True/ListenersNotValid", programmed: "True/Programmed",
			listener: []lw{{"False/HostnameConflict", "True/ResolvedRefs", "False/Invalid", "True/HostnameConflict"},
				{"False/HostnameConflict", "True/ResolvedRefs", "False/Invalid", "True/HostnameConflict"},
				{"True/Accepted", "True/ResolvedRefs", "True/Programmed", "False/NoConflicts"}}},
		{name: "protocol conflict", listeners: []gwv1.Listener{httpListener("a", 80, ""), https("b", 80, "", secret("", "tls"))},
			accepted: "False/ListenersNotValid", programmed: "False/Invalid",
			listener: []lw{{"False/ProtocolConflict", "True/ResolvedRefs", "False/Invalid", "True/ProtocolConflict"},
				{"False/ProtocolConflict", "True/ResolvedRefs", "False/Invalid", "True/ProtocolConflict"}}},
		{name: "unsupported address type", listeners: []gwv1.Listener{httpListener("http", 80, "")},
			mutate: func(in *Input) {
				in.Gateways[0].Spec.Addresses = []gwv1.GatewaySpecAddress{{Type: ptr(gwv1.HostnameAddressType), Value: "lb.example.com"}}
			},
			accepted: "False/UnsupportedAddress", programmed: "False/Invalid",
			listener: []lw{{"True/Accepted", "True/ResolvedRefs", "True/Programmed", "False/NoConflicts"}}},
		{name: "requested address not ours", listeners: []gwv1.Listener{httpListener("http", 80, "")},
			mutate: func(in *Input) {
				in.Gateways[0].Spec.Addresses = []gwv1.GatewaySpecAddress{{Type: ptr(gwv1.IPAddressType), Value: "192.0.2.1"}}
			},
			accepted: "True/Accepted", programmed: "False/AddressNotUsable",
			listener: []lw{{"True/Accepted", "True/ResolvedRefs", "True/Programmed", "False/NoConflicts"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			in.Gateways[0].Spec.Listeners = tc.listeners
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			st, ok := Compute(in).Gateways[gk]
			if !ok {
				t.Fatal("no Gateway status")
			}
			sr := func(c metav1.Condition) string { return string(c.Status) + "/" + c.Reason }
			if got := sr(condOf(t, st.Conditions, "Accepted")); got != tc.accepted {
				t.Errorf("Accepted = %s, want %s", got, tc.accepted)
			}
			if got := sr(condOf(t, st.Conditions, "Programmed")); got != tc.programmed {
				t.Errorf("Programmed = %s, want %s (%s)", got, tc.programmed, condOf(t, st.Conditions, "Programmed").Message)
			}
			if len(st.Listeners) != len(tc.listener) {
				t.Fatalf("%d listener statuses, want %d", len(st.Listeners), len(tc.listener))
			}
			for i, w := range tc.listener {
				l := st.Listeners[i]
				got := lw{sr(condOf(t, l.Conditions, "Accepted")), sr(condOf(t, l.Conditions, "ResolvedRefs")),
					sr(condOf(t, l.Conditions, "Programmed")), sr(condOf(t, l.Conditions, "Conflicted"))}
				if got != w {
					t.Errorf("listener %s = %+v, want %+v", l.Name, got, w)
				}
				for _, c := range l.Conditions {
					if c.ObservedGeneration != 3 {
						t.Errorf("listener %s %s observedGeneration = %d", l.Name, c.Type, c.ObservedGeneration)
					}
				}
			}
			if in.Addresses != nil {
				if len(st.Addresses) != 2 || st.Addresses[0].Value != "10.244.0.3" || *st.Addresses[0].Type != gwv1.IPAddressType {
					t.Errorf("addresses = %+v", st.Addresses)
				}
			}
		})
	}
}

func TestGatewayOfOtherClassIgnored(t *testing.T) {
	in := base()
	in.Gateways = append(in.Gateways, gw("gw", "theirs", "other", httpListener("http", 80, "")), gw("gw", "nobody", "missing", httpListener("http", 80, "")))
	in.HTTPRoutes = []*gwv1.HTTPRoute{httpRoute("gw", "r", []gwv1.ParentReference{parent("theirs")}, nil)}
	r := Compute(in)
	if len(r.Gateways) != 1 {
		t.Errorf("gateways = %v", r.Gateways)
	}
	if len(r.HTTPRoutes) != 0 {
		t.Errorf("a route of another controller's Gateway got a status: %v", r.HTTPRoutes)
	}
}

func TestSupportedKindsAndAttachedRoutes(t *testing.T) {
	in := base()
	only := httpListener("grpc", 8080, "")
	only.AllowedRoutes = &gwv1.AllowedRoutes{Kinds: []gwv1.RouteGroupKind{{Kind: "GRPCRoute"}}}
	in.Gateways[0].Spec.Listeners = []gwv1.Listener{httpListener("http", 80, ""), httpListener("api", 80, "api.example.com"), only}
	in.HTTPRoutes = []*gwv1.HTTPRoute{
		httpRoute("gw", "any", []gwv1.ParentReference{parent("gw")}, nil),                                                 // http, api
		httpRoute("gw", "web", []gwv1.ParentReference{parent("gw")}, []string{"www.example.com"}),                         // http
		httpRoute("gw", "twice", []gwv1.ParentReference{parent("gw"), {Name: "gw", Port: ptr(gwv1.PortNumber(80))}}, nil), // http, api once each
	}
	in.GRPCRoutes = []*gwv1.GRPCRoute{{ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: "g"},
		Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{parent("gw")}}}}}
	st := Compute(in).Gateways[types.NamespacedName{Namespace: "gw", Name: "gw"}]
	want := map[gwv1.SectionName]int32{"http": 4, "api": 3, "grpc": 1}
	for _, l := range st.Listeners {
		if l.AttachedRoutes != want[l.Name] {
			t.Errorf("listener %s attachedRoutes = %d, want %d", l.Name, l.AttachedRoutes, want[l.Name])
		}
	}
	if k := st.Listeners[0].SupportedKinds; len(k) != 2 || k[0].Kind != "HTTPRoute" || k[1].Kind != "GRPCRoute" || *k[0].Group != Group {
		t.Errorf("http supportedKinds = %+v", k)
	}
	if k := st.Listeners[2].SupportedKinds; len(k) != 1 || k[0].Kind != "GRPCRoute" {
		t.Errorf("grpc supportedKinds = %+v", k)
	}
}

func grant(ns, fromGroup, fromKind, fromNS, toGroup, toKind string) *gwv1beta1.ReferenceGrant {
	return &gwv1beta1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"},
		Spec: gwv1beta1.ReferenceGrantSpec{
			From: []gwv1beta1.ReferenceGrantFrom{{Group: gwv1.Group(fromGroup), Kind: gwv1.Kind(fromKind), Namespace: gwv1.Namespace(fromNS)}},
			To:   []gwv1beta1.ReferenceGrantTo{{Group: gwv1.Group(toGroup), Kind: gwv1.Kind(toKind)}},
		}}
}

// A listener the configuration left out (its port is taken) is not accepted, and
// nothing attaches to it.
func TestUnrenderedListener(t *testing.T) {
	in := base()
	in.Gateways[0].Spec.Listeners = []gwv1.Listener{httpListener("http", 80, ""), httpListener("status", 8404, "")}
	in.Notes = []note.Note{
		{Kind: "Gateway", Namespace: "gw", Name: "gw", Section: "status", Reason: "PortUnavailable", Message: "port 8404 is used by the base status frontend"},
		// Other reasons, kinds and Gateways are not about this listener's port.
		{Kind: "Gateway", Namespace: "gw", Name: "gw", Section: "http", Reason: "HostnameConflict", Message: "not read"},
		{Kind: "Gateway", Namespace: "gw", Name: "other", Section: "http", Reason: "PortUnavailable", Message: "not this Gateway"},
		{Kind: "HTTPRoute", Namespace: "gw", Name: "gw", Section: "http", Reason: "PortUnavailable", Message: "not a Gateway"},
	}
	in.HTTPRoutes = []*gwv1.HTTPRoute{
		httpRoute("gw", "on-status", []gwv1.ParentReference{{Name: "gw", SectionName: ptr(gwv1.SectionName("status"))}}, nil, svc("echo", 8080)),
		httpRoute("gw", "any", []gwv1.ParentReference{parent("gw")}, nil, svc("echo", 8080)),
	}
	res := Compute(in)
	st := res.Gateways[types.NamespacedName{Namespace: "gw", Name: "gw"}]
	l := st.Listeners[1]
	wantCond(t, l.Conditions, string(gwv1.ListenerConditionAccepted), metav1.ConditionFalse, string(gwv1.ListenerReasonPortUnavailable))
	wantCond(t, l.Conditions, string(gwv1.ListenerConditionProgrammed), metav1.ConditionFalse, string(gwv1.ListenerReasonInvalid))
	if c := condOf(t, l.Conditions, string(gwv1.ListenerConditionAccepted)); c.Message != "port 8404 is used by the base status frontend" {
		t.Errorf("message %q", c.Message)
	}
	if l.AttachedRoutes != 0 || st.Listeners[0].AttachedRoutes != 1 {
		t.Errorf("attachedRoutes: status %d, http %d; want 0 and 1", l.AttachedRoutes, st.Listeners[0].AttachedRoutes)
	}
	onStatus := res.HTTPRoutes[types.NamespacedName{Namespace: "gw", Name: "on-status"}]
	if len(onStatus.Parents) != 1 {
		t.Fatalf("parents %+v", onStatus.Parents)
	}
	wantCond(t, onStatus.Parents[0].Conditions, string(gwv1.RouteConditionAccepted), metav1.ConditionFalse, string(gwv1.RouteReasonNotAllowedByListeners))
}

// TestGatewayAddressesPerGateway: with per-Gateway pods a Gateway lists its own
// pods' addresses only — never the podSelector's, not even before its own pods are
// discovered — and is Programmed only with one of them.
func TestGatewayAddressesPerGateway(t *testing.T) {
	gk := types.NamespacedName{Namespace: "gw", Name: "gw"}
	ipType := gwv1.IPAddressType
	for _, tc := range []struct {
		name       string
		mutate     func(*Input)
		addresses  []string
		programmed string
	}{
		{name: "shared: the data plane's", mutate: func(in *Input) {},
			addresses: []string{"10.244.0.3", "10.244.0.9"}, programmed: "True/Programmed"},
		{name: "own pods", mutate: func(in *Input) {
			in.PerGateway = true
			in.GatewayAddresses = map[types.NamespacedName][]string{gk: {"10.244.0.55"}}
		}, addresses: []string{"10.244.0.55"}, programmed: "True/Programmed"},
		{name: "new Gateway, its pods not discovered yet", mutate: func(in *Input) {
			in.PerGateway = true
			in.GatewayAddresses = map[types.NamespacedName][]string{{Namespace: "gw", Name: "other"}: {"10.244.0.7"}}
		}, programmed: "False/AddressNotAssigned"},
		{name: "new Gateway, no Gateway discovered yet", mutate: func(in *Input) {
			in.PerGateway = true
		}, programmed: "False/AddressNotAssigned"},
		{name: "own pods not running yet", mutate: func(in *Input) {
			in.PerGateway = true
			in.GatewayAddresses = map[types.NamespacedName][]string{gk: {}}
		}, programmed: "False/AddressNotAssigned"},
		{name: "own pods, configuration not live yet", mutate: func(in *Input) {
			in.PerGateway = true
			in.GatewayAddresses = map[types.NamespacedName][]string{gk: {"10.244.0.55"}}
			in.Programmed = nil
		}, addresses: []string{"10.244.0.55"}, programmed: "False/Pending"},
		{name: "a restarted controller keeps what the status has until its pods are discovered", mutate: func(in *Input) {
			in.PerGateway = true
			in.GatewayAddresses = map[types.NamespacedName][]string{}
			in.Gateways[0].Status.Addresses = []gwv1.GatewayStatusAddress{{Type: &ipType, Value: "10.244.0.55"}}
		}, addresses: []string{"10.244.0.55"}, programmed: "True/Programmed"},
		{name: "discovered pods replace what the status has", mutate: func(in *Input) {
			in.PerGateway = true
			in.GatewayAddresses = map[types.NamespacedName][]string{gk: {"10.244.0.56"}}
			in.Gateways[0].Status.Addresses = []gwv1.GatewayStatusAddress{{Type: &ipType, Value: "10.244.0.55"}}
		}, addresses: []string{"10.244.0.56"}, programmed: "True/Programmed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.mutate(&in)
			st := Compute(in).Gateways[gk]
			var got []string
			for _, a := range st.Addresses {
				got = append(got, a.Value)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.addresses) {
				t.Errorf("addresses = %v, want %v", got, tc.addresses)
			}
			p := condOf(t, st.Conditions, "Programmed")
			if s := string(p.Status) + "/" + p.Reason; s != tc.programmed {
				t.Errorf("Programmed = %s, want %s", s, tc.programmed)
			}
		})
	}
}

// A Gateway that names infrastructure parameters is not accepted: HAPTIC reads none.
func TestGatewayParametersRefRejected(t *testing.T) {
	in := base()
	in.Gateways[0].Spec.Infrastructure = &gwv1.GatewayInfrastructure{
		ParametersRef: &gwv1.LocalParametersReference{Group: "example.com", Kind: "Params", Name: "missing"}}
	st := Compute(in).Gateways[key("gw", "gw")]
	wantCond(t, st.Conditions, "Accepted", metav1.ConditionFalse, "InvalidParameters")
	wantCond(t, st.Conditions, "Programmed", metav1.ConditionFalse, "Invalid")
}
