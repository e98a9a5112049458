package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// TestGatewayPerGateway runs the default libraries (base, ingress, gateway) with
// HAProxy pods provisioned per Gateway: two Gateways on port 80 without hostnames
// get pods and addresses of their own, a route attached to one is not reachable
// through the other, a backendRef-level response header is served, 50 HTTPRoute
// add/remove cycles (each to a new Service) never reload HAProxy, and 20 route
// changes 200 ms apart lose no request of a keep-alive or a new-connection client;
// with the admission webhook, a route its Gateway's render refuses is refused.
func TestGatewayPerGateway(t *testing.T) {
	e := setupWithStart(t, 1, librariesConfig(t, "", "base", "ingress", "gateway"), false) // deploy/local provisions per Gateway
	ca := e.listenWebhook()
	e.metrics, e.stopController = e.runController(nil)
	gw, err := gwclient.NewForConfig(e.c.REST)
	if err != nil {
		t.Fatal(err)
	}
	class := e.ns // a class of its own: other tests' Gateways stay out
	if _, err := gw.GatewayV1().GatewayClasses().Create(e.ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: gwv1.GatewayController(e.controllerName)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = gw.GatewayV1().GatewayClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
	})
	for _, name := range []string{"gw-a", "gw-b"} {
		if _, err := gw.GatewayV1().Gateways(e.ns).Create(e.ctx, &gwv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class), Listeners: []gwv1.Listener{{
				Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType,
			}}, Infrastructure: &gwv1.GatewayInfrastructure{
				Labels:      map[gwv1.LabelKey]gwv1.LabelValue{"team": gwv1.LabelValue(name)},
				Annotations: map[gwv1.AnnotationKey]gwv1.AnnotationValue{"example.com/owner": "team-" + gwv1.AnnotationValue(name)},
			}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	addrOf := map[string]string{}
	for _, name := range []string{"gw-a", "gw-b"} {
		e.eventually(name+" Programmed with an address", 120*time.Second, func() (bool, string) {
			g, err := gw.GatewayV1().Gateways(e.ns).Get(e.ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			programmed := false
			for _, c := range g.Status.Conditions {
				if c.Type == string(gwv1.GatewayConditionProgrammed) && c.Status == metav1.ConditionTrue && c.ObservedGeneration == g.Generation {
					programmed = true
				}
			}
			if programmed && len(g.Status.Addresses) == 1 {
				addrOf[name] = g.Status.Addresses[0].Value
				return true, ""
			}
			return false, fmt.Sprintf("%+v", g.Status)
		})
	}
	if addrOf["gw-a"] == addrOf["gw-b"] {
		t.Fatalf("both Gateways have address %s: they are not isolated", addrOf["gw-a"])
	}
	for _, ip := range addrOf {
		for _, def := range e.haproxyPods() {
			if ip == def {
				t.Fatalf("a Gateway's address %s is one of the podSelector's pods", ip)
			}
		}
	}

	// Each Gateway's pods and its Service (in the Gateway's namespace, listing those
	// pods) carry its infrastructure metadata and the gateway-name label.
	for name, ip := range addrOf {
		e.eventually(name+"'s pods and Service carry its infrastructure metadata", 60*time.Second, func() (bool, string) {
			pods := e.kubectl("get", "pods", "-l", "gateway.networking.k8s.io/gateway-name="+name+",team="+name,
				"-o", `jsonpath={range .items[*]}{.status.podIP}={.metadata.annotations.example\.com/owner}{"\n"}{end}`)
			svc := e.kubectl("get", "services", "-l", "gateway.networking.k8s.io/gateway-name="+name+",team="+name,
				"-o", `jsonpath={.items[*].metadata.name}={.items[*].metadata.annotations.example\.com/owner}`)
			eps := e.kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name="+name+"-haproxy",
				"-o", `jsonpath={.items[*].endpoints[*].addresses[*]}`)
			return strings.Contains(pods, ip+"=team-"+name) && svc == name+"-haproxy=team-"+name && eps == ip,
				fmt.Sprintf("pods %q service %q endpoints %q", pods, svc, eps)
		})
	}

	// Each fleet publishes its rendering as an HAProxyCfg of its own, with its pods' state.
	e.eventually("an HAProxyCfg per Gateway, each deployed on its Gateway's pod", 90*time.Second, func() (bool, string) {
		out := e.kubectl("get", "haproxycfgs", "-o", `jsonpath={range .items[*]}{.metadata.annotations.haproxy-haptic\.org/gateway}={.spec.checksum}:{range .status.pods[*]}{.checksum},{end}{"\n"}{end}`)
		for _, name := range []string{"gw-a", "gw-b"} {
			found := false
			for _, line := range strings.Split(out, "\n") {
				key, rest, _ := strings.Cut(line, "=")
				sum, pods, _ := strings.Cut(rest, ":")
				found = found || (key == e.ns+"/"+name && sum != "" && pods == sum+",")
			}
			if !found {
				return false, out
			}
		}
		return true, ""
	})

	route := func(name, gateway, host, svc string, responseHeader string) *gwv1.HTTPRoute {
		hostname := gwv1.Hostname(host)
		port := gwv1.PortNumber(80)
		ref := gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
			Name: gwv1.ObjectName(svc), Port: &port}}}
		if responseHeader != "" {
			ref.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterResponseHeaderModifier,
				ResponseHeaderModifier: &gwv1.HTTPHeaderFilter{Add: []gwv1.HTTPHeader{{Name: "X-Backend-Header", Value: responseHeader}}}}}
		}
		return &gwv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: gwv1.HTTPRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: gwv1.ObjectName(gateway)}}},
				Hostnames:       []gwv1.Hostname{hostname},
				Rules:           []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{ref}}},
			},
		}
	}
	create := func(r *gwv1.HTTPRoute) {
		t.Helper()
		if _, err := gw.GatewayV1().HTTPRoutes(e.ns).Create(e.ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create route %s: %v", r.Name, err)
		}
	}
	create(route("route-a", "gw-a", "a.example.com", "echo", "from-backend-ref"))
	create(route("route-b", "gw-b", "b.example.com", "echo", ""))

	e.eventually("route-a through gw-a with its backendRef header", 60*time.Second, func() (bool, string) {
		code, hdr, err := e.getGateway(addrOf["gw-a"], "a.example.com", "/")
		return code == 200 && hdr.Get("X-Backend-Header") == "from-backend-ref", fmt.Sprint(code, err, hdr)
	})
	e.eventually("route-b through gw-b", 60*time.Second, func() (bool, string) {
		code, _, err := e.getGateway(addrOf["gw-b"], "b.example.com", "/")
		return code == 200, fmt.Sprint(code, err)
	})
	for _, c := range []struct{ gw, host string }{{"gw-a", "b.example.com"}, {"gw-b", "a.example.com"}} {
		if code, _, err := e.getGateway(addrOf[c.gw], c.host, "/"); code != 404 {
			t.Fatalf("%s is reachable through %s: %d %v (Gateways must be isolated)", c.host, c.gw, code, err)
		}
	}

	// With the admission webhook, routes are checked by their Gateway's fleet render
	// (the render the fleet takes up from next): a route that gw-a's render refuses
	// is refused at apply time, naming the field.
	e.registerWebhook(ca)
	bad := route("bad-match", "gw-a", "bad.example.com", "echo", "")
	regex := gwv1.HeaderMatchRegularExpression
	bad.Spec.Rules[0].Matches = []gwv1.HTTPRouteMatch{{Headers: []gwv1.HTTPHeaderMatch{{Type: &regex, Name: "X-Test", Value: "a b"}}}}
	// (The API server takes up a new webhook configuration within a moment: a route
	// created before that is admitted unchecked, and deleted to try again.)
	e.eventually("gw-a's route with a bad header regex refused, naming the field", 30*time.Second, func() (bool, string) {
		_, err := gw.GatewayV1().HTTPRoutes(e.ns).Create(e.ctx, bad, metav1.CreateOptions{})
		if err == nil {
			if err := gw.GatewayV1().HTTPRoutes(e.ns).Delete(e.ctx, bad.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			return false, "admitted"
		}
		return strings.Contains(err.Error(), "denied the request") && strings.Contains(err.Error(), "HTTPRoute "+e.ns+"/bad-match") &&
			strings.Contains(err.Error(), "headers[0].value"), err.Error()
	})

	agentIP := addrOf["gw-a"]
	e.settle(agentIP)
	before := e.reloadCounts(agentIP)
	var firstOK []time.Duration
	for i := range 50 {
		name, host := fmt.Sprintf("hr-%d", i), fmt.Sprintf("hr-%d.example.com", i)
		created := time.Now()
		e.createService(name)
		create(route(name, "gw-a", host, name, ""))
		e.eventually(host+" answers 200", 30*time.Second, func() (bool, string) {
			code, _, err := e.getGateway(agentIP, host, "/")
			return code == 200, fmt.Sprint(code, err)
		})
		firstOK = append(firstOK, time.Since(created))
		if err := gw.GatewayV1().HTTPRoutes(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := e.c.Client.CoreV1().Services(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually(host+" answers 404", 30*time.Second, func() (bool, string) {
			code, _, err := e.getGateway(agentIP, host, "/")
			return code == 404, fmt.Sprint(code, err)
		})
	}
	e.requireNoReload(agentIP, before, "50 HTTPRoute add/remove cycles")
	sort.Slice(firstOK, func(i, j int) bool { return firstOK[i] < firstOK[j] })
	t.Logf("50 HTTPRoute cycles through gw-a: route created → first 200 median %s, max %s",
		firstOK[len(firstOK)/2].Round(time.Millisecond), firstOK[len(firstOK)-1].Round(time.Millisecond))

	// Route changes under keep-alive and new-connection load lose nothing.
	before = e.reloadCounts(agentIP)
	e.underLoad(net.JoinHostPort(agentIP, "80"), "a.example.com", func() {
		for i := range 20 {
			name := fmt.Sprintf("churn-%d", i/2)
			if i%2 == 0 {
				create(route(name, "gw-a", name+".example.com", "echo", ""))
			} else if err := gw.GatewayV1().HTTPRoutes(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	e.requireNoReload(agentIP, before, "20 HTTPRoute changes under load")

	// Deleting a Gateway removes its pods.
	if err := gw.GatewayV1().Gateways(e.ns).Delete(e.ctx, "gw-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("gw-b's Deployment is gone", 60*time.Second, func() (bool, string) {
		out := e.kubectl("get", "deployments", "-o", "jsonpath={.items[*].metadata.annotations.haproxy-haptic\\.org/gateway}")
		return !strings.Contains(out, e.ns+"/gw-b") && strings.Contains(out, e.ns+"/gw-a"), out
	})
	e.eventually("gw-b's HAProxyCfg and Service are gone", 60*time.Second, func() (bool, string) {
		out := e.kubectl("get", "haproxycfgs", "-o", "jsonpath={.items[*].metadata.annotations.haproxy-haptic\\.org/gateway}")
		svcs := e.kubectl("get", "services", "-o", "jsonpath={.items[*].metadata.name}")
		return !strings.Contains(out, e.ns+"/gw-b") && strings.Contains(out, e.ns+"/gw-a") &&
			!strings.Contains(svcs, "gw-b-haproxy") && strings.Contains(svcs, "gw-a-haproxy"), out + " / " + svcs
	})

	// A changed infrastructure label reaches the Service and, through a rollout, the pods.
	// (read again on a conflict: the controller writes the Gateway's status meanwhile)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		g, err := gw.GatewayV1().Gateways(e.ns).Get(e.ctx, "gw-a", metav1.GetOptions{})
		if err != nil {
			return err
		}
		g.Spec.Infrastructure.Labels = map[gwv1.LabelKey]gwv1.LabelValue{"tier": "edge"}
		_, err = gw.GatewayV1().Gateways(e.ns).Update(e.ctx, g, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.eventually("gw-a's new infrastructure label on its Service and a running pod", 120*time.Second, func() (bool, string) {
		svc := e.kubectl("get", "services", "gw-a-haproxy", "-o", `jsonpath={.metadata.labels.tier},{.metadata.labels.team}`)
		pods := e.kubectl("get", "pods", "-l", "gateway.networking.k8s.io/gateway-name=gw-a,tier=edge,!team",
			"--field-selector", "status.phase=Running", "-o", "jsonpath={.items[*].metadata.name}")
		return svc == "edge," && pods != "", fmt.Sprintf("service labels %q pods %q", svc, pods)
	})
}

// createService creates a Service selecting the echo pods.
func (e *env) createService(name string) {
	e.t.Helper()
	_, err := e.c.Client.CoreV1().Services(e.ns).Create(e.ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "echo"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create service %s: %v", name, err)
	}
}

// getGateway sends one request to a Gateway's address on port 80.
func (e *env) getGateway(ip, host, path string) (int, http.Header, error) {
	code, header, _, err := e.request(ip, "80", host, path)
	return code, header, err
}
