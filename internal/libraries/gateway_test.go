package libraries

import (
	"fmt"
	"strings"
	"testing"
)

// gatewayFixture is one Gateway of our class (port 80, routes from all namespaces)
// and n HTTPRoutes, each with its own host, an Exact and a PathPrefix match, and its
// own Service with an EndpointSlice. extra routes are appended as given.
func gatewayFixture(n int, extra ...map[string]any) map[string][]map[string]any {
	raw := map[string][]map[string]any{
		"gateway-classes": {{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
			"metadata": map[string]any{"name": "haptic"},
			"spec":     map[string]any{"controllerName": "haproxy-haptic.org/controller"},
		}},
		"gateways": {{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
			"metadata": map[string]any{"namespace": "infra", "name": "gw"},
			"spec": map[string]any{"gatewayClassName": "haptic", "listeners": []any{map[string]any{
				"name": "http", "port": 80, "protocol": "HTTP",
				"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}},
			}}},
		}},
	}
	for i := range n {
		ns, name := "ns"+fmt.Sprint(i%10), fmt.Sprintf("app-%d", i)
		raw["http-routes"] = append(raw["http-routes"], gatewayRoute(ns, name, name+".example.com", name, nil))
		raw["services"] = append(raw["services"], map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"namespace": ns, "name": name},
			"spec":     map[string]any{"ports": []any{map[string]any{"name": "http", "port": 80, "targetPort": "http"}}},
		})
		raw["endpoints"] = append(raw["endpoints"], map[string]any{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata": map[string]any{"namespace": ns, "name": name + "-abcde",
				"labels": map[string]any{"kubernetes.io/service-name": name}},
			"addressType": "IPv4",
			"ports":       []any{map[string]any{"name": "http", "port": 8080}},
			"endpoints": []any{map[string]any{
				"addresses":  []any{fmt.Sprintf("10.%d.%d.%d", i/65536%256, i/256%256, i%256)},
				"conditions": map[string]any{"ready": true},
			}},
		})
	}
	raw["http-routes"] = append(raw["http-routes"], extra...)
	return raw
}

// gatewayRoute is an HTTPRoute on infra/gw with an Exact /health and a PathPrefix /api
// match to service:80; headers, when set, are added to both matches.
func gatewayRoute(ns, name, host, service string, headers []any) map[string]any {
	match := func(typ, value string) map[string]any {
		m := map[string]any{"path": map[string]any{"type": typ, "value": value}}
		if headers != nil {
			m["headers"] = headers
		}
		return m
	}
	return map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "gw", "namespace": "infra"}},
			"hostnames":  []any{host},
			"rules": []any{map[string]any{
				"matches":     []any{match("Exact", "/health"), match("PathPrefix", "/api")},
				"backendRefs": []any{map[string]any{"name": service, "port": 80, "weight": 1}},
			}},
		},
	}
}

func content(t *testing.T, raw map[string][]map[string]any, target string) string {
	t.Helper()
	res := renderFixture(t, load(t), raw)
	for _, f := range res.Bundle.Files {
		if f.Target() == target {
			return f.Content.String()
		}
	}
	t.Fatalf("no %s in the bundle", target)
	return ""
}

// TestGatewayMapsLinear: n HTTPRoutes give one map line per route and match (the
// PathPrefix match is one prefix-exact and one prefix line), one plain backend per
// Service, and no route-specific line in haproxy.cfg.
func TestGatewayMapsLinear(t *testing.T) {
	fixture := func(n int) map[string][]map[string]any { return gatewayFixture(n) }
	assertMapsLinear(t, "HTTPRoutes", fixture, func(t *testing.T, n int, cfg string) {
		if got := strings.Count(cfg, "\nbackend gw_"); got != n {
			t.Errorf("%d HTTPRoutes: %d gateway backends, want %d", n, got, n)
		}
		if strings.Contains(cfg, ".example.com") || strings.Contains(cfg, "/api") {
			t.Errorf("%d HTTPRoutes: a path-only route reached haproxy.cfg", n)
		}
	})
}

// TestGatewayPlainRouteKeepsConfig: adding a path-only HTTPRoute to an existing
// backend changes maps only; adding one with a header match changes haproxy.cfg.
func TestGatewayPlainRouteKeepsConfig(t *testing.T) {
	before := content(t, gatewayFixture(3), "haproxy.cfg")
	plain := content(t, gatewayFixture(3, gatewayRoute("ns0", "extra", "extra.example.com", "app-0", nil)), "haproxy.cfg")
	if before != plain {
		t.Errorf("a path-only HTTPRoute changed haproxy.cfg")
	}
	if maps := content(t, gatewayFixture(3, gatewayRoute("ns0", "extra", "extra.example.com", "app-0", nil)), "map:path-exact.map"); !strings.Contains(maps, "@infra/gw:80/extra.example.com/health gw_ns0_app-0_80\n") {
		t.Errorf("the path-only HTTPRoute is not in path-exact.map:\n%s", maps)
	}
	headers := []any{map[string]any{"name": "x-canary", "value": "1"}}
	structural := content(t, gatewayFixture(3, gatewayRoute("ns0", "extra", "extra.example.com", "app-0", headers)), "haproxy.cfg")
	if before == structural {
		t.Errorf("an HTTPRoute with a header match left haproxy.cfg unchanged")
	}
	if !strings.Contains(structural, "{ req.hdr(x-canary) -m str 1 }") {
		t.Errorf("the header match is not a frontend rule")
	}
}

// TestGatewayIsolatedListenersPlainRoute: with listeners of one port isolated by
// hostname (a hostless, a wildcard and an exact one), a path-only HTTPRoute is still
// map lines only, keyed by each listener it attaches to; haproxy.cfg holds one
// listener-selection rule per listener and nothing of the route.
func TestGatewayIsolatedListenersPlainRoute(t *testing.T) {
	withListeners := func(raw map[string][]map[string]any) map[string][]map[string]any {
		all := map[string]any{"namespaces": map[string]any{"from": "All"}}
		raw["gateways"][0]["spec"] = map[string]any{"gatewayClassName": "haptic", "listeners": []any{
			map[string]any{"name": "any", "port": 80, "protocol": "HTTP", "allowedRoutes": all},
			map[string]any{"name": "wild", "port": 80, "protocol": "HTTP", "hostname": "*.example.com", "allowedRoutes": all},
			map[string]any{"name": "abc", "port": 80, "protocol": "HTTP", "hostname": "abc.example.com", "allowedRoutes": all},
		}}
		return raw
	}
	before := content(t, withListeners(gatewayFixture(3)), "haproxy.cfg")
	extra := gatewayRoute("ns0", "extra", "extra.example.com", "app-0", nil)
	after := content(t, withListeners(gatewayFixture(3, extra)), "haproxy.cfg")
	if before != after {
		t.Errorf("a path-only HTTPRoute changed haproxy.cfg with isolated listeners")
	}
	if got := strings.Count(after, "http-request set-var(txn.gwl) "); got != 3 {
		t.Errorf("%d listener-selection rules, want 3", got)
	}
	maps := content(t, withListeners(gatewayFixture(3, extra)), "map:path-exact.map")
	for _, want := range []string{
		"@infra/gw:80/extra.example.com/health gw_ns0_app-0_80\n",
		"@infra/gw:80=*.example.com/extra.example.com/health gw_ns0_app-0_80\n",
	} {
		if !strings.Contains(maps, want) {
			t.Errorf("path-exact.map lacks %q:\n%s", want, maps)
		}
	}
	if strings.Contains(maps, "@infra/gw:80=abc.example.com/extra") {
		t.Errorf("the route reached the abc.example.com listener, whose hostname it does not match:\n%s", maps)
	}
}

// TestGatewayCORSRouteKeepsConfig: adding an HTTPRoute with a CORS filter to an
// existing backend changes maps only (cors.map keyed by the rule, a weighted.map line
// for it, the path maps), never haproxy.cfg: the frontend's CORS rules are there
// without any CORS route.
func TestGatewayCORSRouteKeepsConfig(t *testing.T) {
	before := content(t, gatewayFixture(3), "haproxy.cfg")
	route := gatewayRoute("ns0", "cors", "cors.example.com", "app-0", nil)
	rule := route["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)
	rule["filters"] = []any{map[string]any{"type": "CORS", "cors": map[string]any{
		"allowOrigins":     []any{"https://app.example", "https://*.example.org"},
		"allowCredentials": true,
		"allowMethods":     []any{"GET", "PUT"},
		"exposeHeaders":    []any{"X-Request-Id"},
	}}}
	fixture := func() map[string][]map[string]any { return gatewayFixture(3, route) }
	if after := content(t, fixture(), "haproxy.cfg"); after != before {
		t.Errorf("an HTTPRoute with a CORS filter changed haproxy.cfg")
	}
	for target, want := range map[string]string{
		"map:cors.map":                 "@h/ns0/cors/0 GET,PUT||5|X-Request-Id|true|wild\n@h/ns0/cors/0/https://app.example https://app.example\n@h/ns0/cors/0/https://app.example:443 https://app.example\n",
		"map:gateway-cors-origins.map": "^@h/ns0/cors/0/https://[a-z0-9._-]+\\.example\\.org(?::443)?$ https://*.example.org\n",
		"map:path-exact.map":           "@infra/gw:80/cors.example.com/health MULTI:@h/ns0/cors/0\n",
		"map:weighted.map":             "@h/ns0/cors/0 1\n@h/ns0/cors/0/0 gw_ns0_app-0_80\n",
	} {
		if got := content(t, fixture(), target); !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", target, want, got)
		}
	}
}

// TestGatewayHeaderModifiersKeepConfig: an HTTPRoute with request and response
// header modifiers of header names no route used before changes maps only (the
// frontend's fixed rules hand them to haptic-headers.lua: no reload); one whose
// values would make too long a map line keeps them as directives of its own backend.
func TestGatewayHeaderModifiersKeepConfig(t *testing.T) {
	withFilters := func(value string) map[string]any {
		r := gatewayRoute("ns0", "mod", "mod.example.com", "app-0", nil)
		rule := r["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)
		rule["filters"] = []any{
			map[string]any{"type": "RequestHeaderModifier", "requestHeaderModifier": map[string]any{
				"set": []any{map[string]any{"name": "X-Never-Seen", "value": value}}, "remove": []any{"X-Gone"}}},
			map[string]any{"type": "ResponseHeaderModifier", "responseHeaderModifier": map[string]any{
				"add": []any{map[string]any{"name": "X-Also-New", "value": "1"}}}},
		}
		return r
	}
	before := content(t, gatewayFixture(3), "haproxy.cfg")
	if got := content(t, gatewayFixture(3, withFilters("a b")), "haproxy.cfg"); got != before {
		t.Errorf("header modifiers of new names changed haproxy.cfg")
	}
	if got := content(t, gatewayFixture(3, withFilters("a b")), "map:gateway-backend-headers.map"); got !=
		"@h/ns0/mod/0/q dX-Gone= sX-Never-Seen=a%20b\n@h/ns0/mod/0/r aX-Also-New=1\n" {
		t.Errorf("gateway-backend-headers.map:\n%s", got)
	}
	long := strings.Repeat("v", 4100)
	cfg := content(t, gatewayFixture(3, withFilters(long)), "haproxy.cfg")
	if !strings.Contains(cfg, "http-request set-header X-Never-Seen "+long) {
		t.Errorf("a header value too long for a map line is not a directive of the rule's backend")
	}
}

// TestGatewayFirstBadRouteFails: routes are computed in runs on every core, but a
// render fails with the first failing route in route order, as one by one.
func TestGatewayFirstBadRouteFails(t *testing.T) {
	bad := func(ns, name string) map[string]any {
		r := gatewayRoute(ns, name, name+".example.com", "app-0", nil)
		r["spec"].(map[string]any)["rules"] = []any{map[string]any{
			"matches":     []any{map[string]any{"path": map[string]any{"type": "RegularExpression", "value": "/v([0-9]+/items"}}},
			"backendRefs": []any{map[string]any{"name": "app-0", "port": 80, "weight": 1}},
		}}
		return r
	}
	// 300 routes are five runs; the order is namespace/name (no creationTimestamp)
	assertRenderFails(t, gatewayFixture(300, bad("zz-last", "bad-z"), bad("a-first", "bad-a")),
		"HTTPRoute a-first/bad-a: spec.rules[0].matches[0].path.value: regular expression")
}
