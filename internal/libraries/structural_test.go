package libraries

import (
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/plan"
)

// withAnnotations sets annotations on the last Ingress of raw.
func withAnnotations(raw map[string][]map[string]any, ann map[string]any) map[string][]map[string]any {
	ings := raw["ingresses"]
	ings[len(ings)-1]["metadata"].(map[string]any)["annotations"] = ann
	return raw
}

// headerSet annotates the first Ingress of raw with request-set-header.
func headerSet(raw map[string][]map[string]any, value string) map[string][]map[string]any {
	raw["ingresses"][0]["metadata"].(map[string]any)["annotations"] = map[string]any{
		"haproxy-haptic.org/request-set-header": value,
	}
	return raw
}

// TestPlainRoutesAreReloadFree renders a running state and a desired state with one
// more Ingress (to a new Service) and asks plan how to get there: an Ingress without
// structural annotations must fit a pool slot (no reload), annotations that live in
// frontend maps or in server options add server takes must too, and backend-level
// ones must reload.
func TestPlainRoutesAreReloadFree(t *testing.T) {
	p := load(t)
	caps, err := plan.CapabilitiesFor("2.6.12")
	if err != nil {
		t.Fatal(err)
	}
	// The first Ingress sets X-Team, so the frontend already has the rule for that name.
	running := renderFixture(t, p, headerSet(ingresses(5), "X-Team a")).Bundle
	for _, tc := range []struct {
		name   string
		ann    map[string]any
		reload bool
	}{
		{"plain", nil, false},
		{"map-driven annotations", map[string]any{
			"haproxy-haptic.org/compress-enable": "false",
			"haproxy-haptic.org/ssl-redirect":    "true",
			"haproxy-haptic.org/rate-limit-rps":  "10",
			"haproxy-haptic.org/cors-enable":     "true",
		}, false},
		{"header value, known header name", map[string]any{"haproxy-haptic.org/request-set-header": "X-Team b"}, false},
		{"new header name (one frontend rule)", map[string]any{"haproxy-haptic.org/request-set-header": "X-Other b"}, true},
		{"backend directive", map[string]any{"haproxy-haptic.org/timeout-server": "2m"}, true},
		{"server options add server takes (proto h2)", map[string]any{"haproxy-haptic.org/backend-protocol": "h2"}, false},
		{"server options add server takes (TLS, ALPN)", map[string]any{"haproxy-haptic.org/backend-protocol": "h2s"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desired := renderFixture(t, p, withAnnotations(headerSet(ingresses(6), "X-Team a"), tc.ann)).Bundle
			res := plan.Plan(plan.Running{Bundle: running}, desired, caps)
			if res.Reload != tc.reload {
				t.Fatalf("reload = %v, want %v; reasons: %v", res.Reload, tc.reload, res.Reasons)
			}
			if tc.reload {
				return
			}
			var ops []string
			for _, op := range res.Ops {
				b, _ := op.MarshalJSON()
				ops = append(ops, string(b))
			}
			if all := strings.Join(ops, "\n"); !strings.Contains(all, "haptic_pool_") {
				t.Errorf("the new backends should run in pool slots; ops:\n%s", all)
			}
		})
	}
}
