package benchmix

import (
	"fmt"
	"time"
)

// Objects are raw objects by watched resource name, as store.Builder.Snapshot takes them.
type Objects map[string][]map[string]any

// Kind selects the routes of the mix.
type Kind string

const (
	// Ingress: networking.k8s.io/v1 Ingresses of class "haptic".
	Ingress Kind = "ingress"
	// HTTPRoute: HTTPRoutes attached to one Gateway of class "haptic".
	HTTPRoute Kind = "httproute"
)

// Namespace holds every generated object.
const Namespace = "bench"

// Build returns n routes of kind with their Services and EndpointSlices (and, for
// HTTPRoutes, the GatewayClass, Gateway and Namespace they need).
func Build(kind Kind, n int) Objects {
	out := Objects{}
	for i := range n {
		out.add(kind, i)
	}
	if kind == HTTPRoute {
		out["gateway-classes"] = []map[string]any{GatewayClass()}
		out["gateways"] = []map[string]any{Gateway()}
		out["namespaces"] = []map[string]any{{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": Namespace}}}
	}
	return out
}

func (o Objects) add(kind Kind, i int) {
	if kind == HTTPRoute {
		o["http-routes"] = append(o["http-routes"], Route(i))
	} else {
		o["ingresses"] = append(o["ingresses"], IngressObject(i))
	}
	o["services"] = append(o["services"], Service(i))
	o["endpoints"] = append(o["endpoints"], EndpointSlice(i, 0), EndpointSlice(i, 1))
}

// IngressObject is Ingress i: host bench-i.example.com, a Prefix / and an Exact
// /api/v1 path, both to Service i port 80.
func IngressObject(i int) map[string]any {
	backend := func() map[string]any {
		return map[string]any{"service": map[string]any{"name": svcName(i), "port": map[string]any{"number": int64(80)}}}
	}
	return map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": fmt.Sprintf("bench-ing-%d", i), "namespace": Namespace},
		"spec": map[string]any{
			"ingressClassName": "haptic",
			"rules": []any{map[string]any{
				"host": fmt.Sprintf("bench-%d.example.com", i),
				"http": map[string]any{"paths": []any{
					map[string]any{"path": "/", "pathType": "Prefix", "backend": backend()},
					map[string]any{"path": "/api/v1", "pathType": "Exact", "backend": backend()},
				}},
			}},
		},
	}
}

// Route is HTTPRoute i on the Gateway: hostname bench-i.example.com, a PathPrefix /
// and an Exact /api/v1 match, both to Service i port 80, created after route i-1
// (the API server stamps every object; the Gateway library orders routes by it).
func Route(i int) map[string]any {
	ref := func() []any { return []any{map[string]any{"name": svcName(i), "port": int64(80), "weight": int64(1)}} }
	return map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": fmt.Sprintf("bench-route-%d", i), "namespace": Namespace, "creationTimestamp": created(i)},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "bench-gw"}},
			"hostnames":  []any{fmt.Sprintf("bench-%d.example.com", i)},
			"rules": []any{
				map[string]any{"matches": []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}}, "backendRefs": ref()},
				map[string]any{"matches": []any{map[string]any{"path": map[string]any{"type": "Exact", "value": "/api/v1"}}}, "backendRefs": ref()},
			},
		},
	}
}

// GatewayClass is the class "haptic" of HAPTIC's controller.
func GatewayClass() map[string]any {
	return map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": "haptic"},
		"spec":     map[string]any{"controllerName": "haproxy-haptic.org/controller"}}
}

// Gateway is bench/bench-gw with one HTTP listener on port 80 open to every namespace.
func Gateway() map[string]any {
	return map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": "bench-gw", "namespace": Namespace, "creationTimestamp": "2026-01-01T00:00:00Z"},
		"spec": map[string]any{"gatewayClassName": "haptic", "listeners": []any{map[string]any{
			"name": "http", "port": int64(80), "protocol": "HTTP",
			"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}},
		}}}}
}

// Service is Service i: port http 80 to a target port between 8080 and 8179.
func Service(i int) map[string]any { return namedService(svcName(i), targetPort(i)) }

// EndpointSlice is slice s of Service i with one ready IPv4 endpoint.
func EndpointSlice(i, s int) map[string]any {
	sl := namedEndpointSlice(svcName(i), targetPort(i), fmt.Sprintf("10.%d.%d.%d", 1+s, (i/250)%250, i%250))
	sl["metadata"].(map[string]any)["name"] = fmt.Sprintf("%s-%d", svcName(i), s)
	return sl
}

func namedService(name string, targetPort int) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": Namespace},
		"spec": map[string]any{"ports": []any{map[string]any{
			"name": "http", "port": int64(80), "targetPort": int64(targetPort),
		}}}}
}

func namedEndpointSlice(service string, port int, address string) map[string]any {
	return map[string]any{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata": map[string]any{"name": service + "-0", "namespace": Namespace,
			"labels": map[string]any{"kubernetes.io/service-name": service}},
		"addressType": "IPv4",
		"ports":       []any{map[string]any{"name": "http", "port": int64(port)}},
		"endpoints": []any{map[string]any{
			"addresses":  []any{address},
			"conditions": map[string]any{"ready": true},
		}}}
}

func svcName(i int) string { return fmt.Sprintf("bench-svc-%d", i) }
func targetPort(i int) int { return 8080 + i%100 }

// BuildProbe returns n routes in the shape of the probe benchmark (ProbeRoute) on
// the Gateway, with their one backend Service and its EndpointSlice.
func BuildProbe(n int) Objects {
	out := Objects{
		"gateway-classes": {GatewayClass()},
		"gateways":        {Gateway()},
		"namespaces":      {{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": Namespace}}},
		"services":        {namedService("backend", 8080)},
		"endpoints":       {namedEndpointSlice("backend", 8080, "10.2.0.1")},
	}
	for i := range n {
		out["http-routes"] = append(out["http-routes"], ProbeRoute(i))
	}
	return out
}

// ProbeRoute is the probe benchmark's route i: host <i>-route.example.com,
// PathPrefix /<i> to Service backend and / to a Service that does not exist, both
// with a request- and a response-header add filter. Routes are created 20 a second,
// as the probe creates them.
func ProbeRoute(i int) map[string]any {
	rule := func(svc, path string) map[string]any {
		return map[string]any{
			"matches": []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": path}}},
			"filters": []any{
				map[string]any{"type": "RequestHeaderModifier", "requestHeaderModifier": map[string]any{
					"add": []any{map[string]any{"name": "added-header", "value": "added-value"}}}},
				map[string]any{"type": "ResponseHeaderModifier", "responseHeaderModifier": map[string]any{
					"add": []any{map[string]any{"name": "added-resp-header", "value": "added-resp-value"}}}},
			},
			"backendRefs": []any{map[string]any{"name": svc, "port": int64(80), "weight": int64(1)}},
		}
	}
	return map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": fmt.Sprintf("%d-route", i), "namespace": Namespace,
			"creationTimestamp": created(i)},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "bench-gw"}},
			"hostnames":  []any{fmt.Sprintf("%d-route.example.com", i)},
			"rules":      []any{rule("backend", fmt.Sprintf("/%d", i)), rule("invalid-backend", "/")},
		},
	}
}

// BuildProbeIngress returns n Ingresses in the shape of the Ingress probe
// (ProbeIngress), with their one backend Service and its EndpointSlice.
func BuildProbeIngress(n int) Objects {
	out := Objects{
		"services":  {namedService("backend", 8080)},
		"endpoints": {namedEndpointSlice("backend", 8080, "10.2.0.1")},
	}
	for i := range n {
		out["ingresses"] = append(out["ingresses"], ProbeIngress(i))
	}
	return out
}

// ProbeIngress is the Ingress probe's Ingress i: <i>-ingress, host
// <i>-ingress.example.com, Prefix /<i> to Service backend port 80.
func ProbeIngress(i int) map[string]any {
	return map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": fmt.Sprintf("%d-ingress", i), "namespace": Namespace},
		"spec": map[string]any{
			"ingressClassName": "haptic",
			"rules": []any{map[string]any{
				"host": fmt.Sprintf("%d-ingress.example.com", i),
				"http": map[string]any{"paths": []any{map[string]any{"path": fmt.Sprintf("/%d", i), "pathType": "Prefix",
					"backend": map[string]any{"service": map[string]any{"name": "backend", "port": map[string]any{"number": int64(80)}}}}}},
			}},
		},
	}
}

// created is route i's creationTimestamp: routes created 20 a second, in order.
func created(i int) string {
	return time.Date(2026, 1, 1, 0, 0, i/20, 0, time.UTC).Format(time.RFC3339)
}
