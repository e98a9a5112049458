package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// A ListenerSet in a team's namespace adds a hostname (and a port) to a shared
// Gateway its spec.allowedListeners admits; a route attached to the set answers on
// them through HAProxy. A set from a namespace the Gateway does not admit is
// refused (NotAllowed) and its hostname not served; deleting the admitted set stops
// serving its hostname.
func TestListenerSetSharedGateway(t *testing.T) {
	g := setupGateways(t, "")
	team, other := g.ns+"-team", g.ns+"-other"
	for name, labels := range map[string]map[string]string{team: {"lset-e2e": g.ns}, other: nil} {
		if _, err := g.c.Client.CoreV1().Namespaces().Create(g.ctx, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = g.c.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	// The routes live beside their sets; the echo Service is in the test's namespace.
	if _, err := g.gw.GatewayV1beta1().ReferenceGrants(g.ns).Create(g.ctx, &gwv1beta1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: "routes-to-echo"},
		Spec: gwv1beta1.ReferenceGrantSpec{
			From: []gwv1beta1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: "HTTPRoute", Namespace: gwv1.Namespace(team)},
				{Group: gwv1.GroupName, Kind: "HTTPRoute", Namespace: gwv1.Namespace(other)}},
			To: []gwv1beta1.ReferenceGrantTo{{Group: "", Kind: "Service"}},
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	gwHost, all := gwv1.Hostname("gw.example.com"), gwv1.NamespacesFromAll
	selector := gwv1.NamespacesFromSelector
	if _, err := g.gw.GatewayV1().Gateways(g.ns).Create(g.ctx, &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "shared"},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(g.class),
			Listeners: []gwv1.Listener{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType, Hostname: &gwHost,
				AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: &all}}}},
			AllowedListeners: &gwv1.AllowedListeners{Namespaces: &gwv1.ListenerNamespaces{From: &selector,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"lset-e2e": g.ns}}}},
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gwNS := gwv1.Namespace(g.ns)
	newSet := func(ns, name, host string, extraPort gwv1.PortNumber) *gwv1.ListenerSet {
		h := gwv1.Hostname(host)
		set := &gwv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: gwv1.ListenerSetSpec{ParentRef: gwv1.ParentGatewayReference{Name: "shared", Namespace: &gwNS},
				Listeners: []gwv1.ListenerEntry{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType, Hostname: &h}}}}
		if extraPort != 0 {
			set.Spec.Listeners = append(set.Spec.Listeners, gwv1.ListenerEntry{Name: "alt", Port: extraPort, Protocol: gwv1.HTTPProtocolType, Hostname: &h})
		}
		return set
	}
	for _, set := range []*gwv1.ListenerSet{newSet(team, "team", "team.example.com", 8081), newSet(other, "intruder", "intruder.example.com", 0)} {
		if _, err := g.gw.GatewayV1().ListenerSets(set.Namespace).Create(g.ctx, set, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rt := httpRoute(set.Name, set.Name, string(*set.Spec.Listeners[0].Hostname), "/")
		kind := gwv1.Kind("ListenerSet")
		rt.Spec.ParentRefs[0].Kind = &kind
		rt.Spec.Rules[0].BackendRefs[0].Namespace = &gwNS
		if _, err := g.gw.GatewayV1().HTTPRoutes(set.Namespace).Create(g.ctx, rt, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	addr, err := g.gatewayAddress("shared", 180*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	get := func(port int, host string) (int, error) {
		req, err := http.NewRequestWithContext(g.ctx, http.MethodGet, "http://"+net.JoinHostPort(addr, strconv.Itoa(port))+"/", nil)
		if err != nil {
			return 0, err
		}
		req.Host = host
		resp, err := g.http.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	g.eventually("the set's route answers on its hostname, on the Gateway's port and on the set's own", 90*time.Second, func() (bool, string) {
		c80, err80 := get(80, "team.example.com")
		c81, err81 := get(8081, "team.example.com")
		return c80 == 200 && c81 == 200, fmt.Sprintf("port 80: %d %v; port 8081: %d %v", c80, err80, c81, err81)
	})
	g.eventually("the Gateway's Service carries the set's port", 60*time.Second, func() (bool, string) {
		svc, err := g.c.Client.CoreV1().Services(g.ns).Get(g.ctx, "shared-haproxy", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		var ports []int32
		for _, p := range svc.Spec.Ports {
			ports = append(ports, p.Port)
		}
		return slices.Contains(ports, 80) && slices.Contains(ports, 8081), fmt.Sprint("ports ", ports)
	})
	g.eventually("the team's set Accepted and Programmed, one set attached to the Gateway", 60*time.Second, func() (bool, string) {
		set, err := g.gw.GatewayV1().ListenerSets(team).Get(g.ctx, "team", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		gw, err := g.gw.GatewayV1().Gateways(g.ns).Get(g.ctx, "shared", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		n := int32(-1)
		if gw.Status.AttachedListenerSets != nil {
			n = *gw.Status.AttachedListenerSets
		}
		ok := hasCondition(set.Status.Conditions, "Accepted", metav1.ConditionTrue, "Accepted") &&
			hasCondition(set.Status.Conditions, "Programmed", metav1.ConditionTrue, "Programmed") && n == 1
		return ok, fmt.Sprintf("set %+v; attachedListenerSets %d", set.Status.Conditions, n)
	})
	g.eventually("the intruder's set refused with NotAllowed", 60*time.Second, func() (bool, string) {
		set, err := g.gw.GatewayV1().ListenerSets(other).Get(g.ctx, "intruder", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ok := hasCondition(set.Status.Conditions, "Accepted", metav1.ConditionFalse, "NotAllowed") &&
			hasCondition(set.Status.Conditions, "Programmed", metav1.ConditionFalse, "NotAllowed")
		return ok, fmt.Sprintf("%+v", set.Status.Conditions)
	})
	if code, err := get(80, "intruder.example.com"); code != 404 {
		t.Errorf("a refused set's hostname answered %d (err %v), want 404", code, err)
	}
	if code, err := get(80, "gw.example.com"); code != 404 {
		t.Errorf("the Gateway's own hostname, without a route of its own, answered %d (err %v), want 404", code, err)
	}

	if err := g.gw.GatewayV1().ListenerSets(team).Delete(g.ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	g.eventually("a deleted set's hostname no longer served", 60*time.Second, func() (bool, string) {
		code, err := get(80, "team.example.com")
		return code == 404, fmt.Sprintf("code %d err %v", code, err)
	})
}

func hasCondition(conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == status && c.Reason == reason
		}
	}
	return false
}
