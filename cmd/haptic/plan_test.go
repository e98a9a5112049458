package main

import (
	"strings"
	"testing"
)

// A config whose backend lists one server per fixture object: tests "one" and "two"
// differ only in servers, "route" adds a backend.
const planCfg = `  watchedResources:
    endpoints: {apiVersion: v1, resources: endpoints}
  haproxyConfig:
    template: |
      global
      defaults
        mode http
        timeout connect 1s
        timeout client 1s
        timeout server 1s
      frontend f
        bind :8080
        default_backend app
      backend app
        balance roundrobin
      {% for _, ep := range resources.Endpoints.List() %}
        server {{ ep.Metadata.Name }} 127.0.0.1:{{ len(ep.Metadata.Name) + 9000 }} check
      {% end %}
      {% if len(resources.Endpoints.List()) > 2 %}
      backend extra
      {% end %}
  validationTests:
    one:
      fixtures:
        endpoints: [{apiVersion: v1, kind: Endpoints, metadata: {name: a, namespace: x}}]
    two:
      fixtures:
        endpoints:
        - {apiVersion: v1, kind: Endpoints, metadata: {name: a, namespace: x}}
        - {apiVersion: v1, kind: Endpoints, metadata: {name: bb, namespace: x}}
    three:
      fixtures:
        endpoints:
        - {apiVersion: v1, kind: Endpoints, metadata: {name: a, namespace: x}}
        - {apiVersion: v1, kind: Endpoints, metadata: {name: bb, namespace: x}}
        - {apiVersion: v1, kind: Endpoints, metadata: {name: ccc, namespace: x}}
`

func TestPlanCommand(t *testing.T) {
	cfg := writeConfig(t, planCfg)
	code, out, errOut := runCLI(t, "plan", "-f", cfg, "--from", "one", "--to", "two")
	if code != exitOK || !strings.Contains(out, "reload-free on HAProxy 2.6.12: 1 runtime operations") || !strings.Contains(out, `"op":"add-server"`) {
		t.Fatalf("server churn: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "plan", "-f", cfg, "--from", "two", "--to", "three")
	if code != exitTestsFailed || !strings.Contains(out, "backend extra: added: add backend needs HAProxy 3.4") {
		t.Fatalf("new backend: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "plan", "-f", cfg, "--from", "one", "--to", "one")
	if code != exitOK || !strings.Contains(out, "no change reaches HAProxy") {
		t.Fatalf("no change: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "plan", "-f", cfg, "--from", "nope"); code != exitUsage || !strings.Contains(errOut, `"nope"`) {
		t.Fatalf("unknown test: exit %d %s", code, errOut)
	}
}
