package render

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

func endpointObject(ns, name string, raw map[string]any) snapshot.Object {
	raw["metadata"] = map[string]any{"namespace": ns, "name": name, "labels": map[string]any{"kubernetes.io/service-name": "web"}}
	return snapshot.Object{Namespace: ns, Name: name, Raw: raw}
}

// service_servers writes a server per ready IP address of the Service port (by name
// or number), once each, and a comment for an address that is not an IP address.
func TestServiceServers(t *testing.T) {
	svc := endpointObject("ns", "web", map[string]any{"spec": map[string]any{"ports": []any{
		map[string]any{"name": "http", "port": int64(80)}, map[string]any{"name": "admin", "port": float64(9000)}}}})
	slice := func(name string, port int64, eps ...any) snapshot.Object {
		return endpointObject("ns", name, map[string]any{"ports": []any{map[string]any{"name": "http", "port": port},
			map[string]any{"name": "admin", "port": int64(9001)}}, "endpoints": eps})
	}
	ep := func(ready any, addrs ...any) map[string]any {
		e := map[string]any{"addresses": addrs}
		if ready != nil {
			e["conditions"] = map[string]any{"ready": ready}
		}
		return e
	}
	snap := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{
		"services": snapshot.NewStore("services", indexPaths("metadata.namespace", "metadata.name"), nil, []snapshot.Object{svc}),
		"endpoints": snapshot.NewStore("endpoints", indexPaths("metadata.namespace", "metadata.labels['kubernetes.io/service-name']"), nil, []snapshot.Object{
			slice("web-a", 8080, ep(true, "10.0.0.1", "10.0.0.1"), ep(false, "10.0.0.2"), ep(nil, "10.0.0.3"), ep(true, "db.example", "fd00::1")),
			slice("web-b", 8080, ep(true, "10.0.0.1", "10.0.0.4")),
		}),
	}}
	// The same with the lines read ahead (servers_ahead), by the template or ahead
	// of it, whichever reaches a backend first; and by the backend's place in the
	// list servers_ahead was given (backend_servers).
	ahead := `{% servers_ahead("services", "endpoints", []*IngressBackend{
  {Namespace: "ns", Service: "web", Port: "http"}, {Namespace: "ns", Service: "web", Port: "9000"},
  {Namespace: "ns", Service: "web", Port: "81"}, {Namespace: "ns", Service: "nothing", Port: "http"}}) %}
`
	byName := `backend a
{{ service_servers("services", "endpoints", "ns", "web", "http", " check") }}
backend b
{{ service_servers("services", "endpoints", "ns", "web", "9000", "") }}
backend c
{{ service_servers("services", "endpoints", "ns", "web", "81", "") }}
backend d
{{ service_servers("services", "endpoints", "ns", "nothing", "http", "") }}
`
	byPlace := `backend a
{{ backend_servers(" check", 0) }}
backend b
{{ backend_servers("", 1) }}
backend c
{{ backend_servers("", 2) }}
backend d
{{ backend_servers("", 3) }}
`
	for _, template := range []string{byName, ahead + byName, ahead + byPlace} {
		spec := testSpec(template)
		e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Render(context.Background(), Input{Snapshot: snap})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Bundle.Config().Content.String()
		want := `backend a
    server srv_10_0_0_1_8080 10.0.0.1:8080 check
    server srv_10_0_0_3_8080 10.0.0.3:8080 check
    # haptic: "EndpointSlice ns/web-a: address \"db.example\" is not an IP address; skipped"
    server srv_fd00__1_8080 fd00::1:8080 check
    server srv_10_0_0_4_8080 10.0.0.4:8080 check

backend b
    server srv_10_0_0_1_9001 10.0.0.1:9001
    server srv_10_0_0_3_9001 10.0.0.3:9001
    # haptic: "EndpointSlice ns/web-a: address \"db.example\" is not an IP address; skipped"
    server srv_fd00__1_9001 fd00::1:9001
    server srv_10_0_0_4_9001 10.0.0.4:9001

backend c

backend d
`
		if !strings.Contains(got, want) {
			t.Errorf("got\n%s\nwant it to hold\n%s", got, want)
		}
	}
}

// backend_servers and gateway_backend_servers name a backend by its place in the
// list servers_ahead or gateway_backend_runs was given: a call without such a list,
// or past its end, fails the render saying so. (The libraries' tests check the lines
// they write.)
func TestServersByPlaceNeedTheirList(t *testing.T) {
	const gatewayList = `{% var bs = []*GatewayBackend{{Name: "a"}, {Name: "b"}} %}{% var _ = gateway_backend_runs(bs, 128) %}`
	for template, want := range map[string]string{
		`{{ backend_servers("", 0) }}`: "backend_servers: no servers_ahead call before it in this render",
		`{% servers_ahead("services", "endpoints", []*IngressBackend{{Namespace: "ns", Service: "web", Port: "http"}}) %}{{ backend_servers("", 1) }}`: "backend_servers: backend 1 of 1",
		`{{ gateway_backend_servers("", 0) }}`:               "gateway_backend_servers: no gateway_backend_runs call before it in this render",
		gatewayList + `{{ gateway_backend_servers("", 2) }}`: "gateway_backend_servers: backend 2 of 2",
	} {
		e, err := Compile(testSpec(template), Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Render(context.Background(), Input{Snapshot: &snapshot.Snapshot{Stores: map[string]*snapshot.Store{}}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error holding %q", template, err, want)
		}
	}
}

// A set of server names answers the same while a list and once a map.
func TestServerSet(t *testing.T) {
	var s serverSet
	for round := range 2 {
		for i := range 40 {
			name := serverName("10.0.0."+strconv.Itoa(i), "80")
			if got := s.add(name); got != (round == 0) {
				t.Fatalf("round %d: add(%s) = %v", round, name, got)
			}
		}
	}
}
