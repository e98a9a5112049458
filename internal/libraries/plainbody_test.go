package libraries

import (
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
)

// The libraries render backend-plain-body once per render and write it at the start
// of every backend section (Ingress, Gateway and pool backends alike): an override
// with content reaches each of them.
func TestBackendPlainBodyStartsEveryBackend(t *testing.T) {
	cfg, err := config.LoadFiles(libraries...)
	if err != nil {
		t.Fatal(err)
	}
	snip := cfg.Spec.TemplateSnippets["backend-plain-body"]
	snip.Template = "timeout server 7s\n"
	cfg.Spec.TemplateSnippets["backend-plain-body"] = snip
	p, err := pipeline.New(cfg, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw := ingresses(3)
	for res, objs := range gatewayFixture(2) {
		raw[res] = append(raw[res], objs...)
	}
	res := renderFixture(t, p, raw)
	var haproxyCfg string
	for _, f := range res.Bundle.Files {
		if f.Target() == "haproxy.cfg" {
			haproxyCfg = f.Content.String()
		}
	}
	kinds := map[string]int{}
	sections := strings.Split(haproxyCfg, "\nbackend ")[1:]
	for _, s := range sections {
		name, body, _ := strings.Cut(s, "\n")
		kind := strings.SplitN(name, "_", 2)[0]
		if kind == "haptic" && !strings.HasPrefix(name, "haptic_pool_") {
			continue // (the library's own: 404, 500, the rate-limit table)
		}
		kinds[kind]++
		if first, _, _ := strings.Cut(strings.TrimSpace(body), "\n"); first != "timeout server 7s" {
			t.Errorf("backend %s starts with %q", name, first)
		}
	}
	if kinds["ing"] < 3 || kinds["gw"] < 1 || kinds["haptic"] < 1 {
		t.Fatalf("backends by kind %v: the fixture did not render Ingress, Gateway and pool backends", kinds)
	}
}
