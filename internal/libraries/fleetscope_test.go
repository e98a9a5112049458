package libraries

import (
	"context"
	"testing"
)

// The shipped libraries keep the per-Gateway contract internal/fleetscope relies on
// to skip renders: rendered for one Gateway (extraContext.gateway), the bundle does
// not depend on another Gateway or on the routes attached only to it; rendered with
// "-" (the podSelector's pods when every Gateway has its own) on neither.
func TestPerGatewayRenderReadsOnlyItsGateway(t *testing.T) {
	p := load(t)
	base := gatewayFixture(3)
	other := cloneRaw(map[string][]map[string]any{"g": {base["gateways"][0]}})["g"][0]
	other["metadata"] = map[string]any{"namespace": "infra", "name": "other"}
	base["gateways"] = append(base["gateways"], other)
	base["http-routes"] = append(base["http-routes"], gatewayRoute("apps", "on-other", "other.example.com", "app-0", nil))
	base["http-routes"][len(base["http-routes"])-1]["spec"].(map[string]any)["parentRefs"] = []any{map[string]any{"namespace": "infra", "name": "other"}}

	changes := map[string]func(map[string][]map[string]any){
		"a route on gw is added": func(raw map[string][]map[string]any) {
			raw["http-routes"] = append(raw["http-routes"], gatewayRoute("apps", "new", "new.example.com", "app-1", nil))
		},
		"a route on gw is removed": func(raw map[string][]map[string]any) { raw["http-routes"] = raw["http-routes"][1:] },
		"gw gets a listener": func(raw map[string][]map[string]any) {
			spec := raw["gateways"][0]["spec"].(map[string]any)
			spec["listeners"] = append(spec["listeners"].([]any), map[string]any{"name": "alt", "port": 8081, "protocol": "HTTP"})
		},
	}
	hash := func(raw map[string][]map[string]any, gateway string) string {
		t.Helper()
		res, err := renderRaw(context.Background(), p, raw, map[string]any{"gateway": gateway})
		if err != nil {
			t.Fatal(err)
		}
		return res.Bundle.Hash
	}
	for what, change := range changes {
		changed := cloneRaw(base)
		change(changed)
		for _, fleet := range []string{"infra/other", "-"} {
			if hash(base, fleet) != hash(changed, fleet) {
				t.Errorf("%s: the render for %q changed", what, fleet)
			}
		}
		// The control: gw's own render sees it.
		if hash(base, "infra/gw") == hash(changed, "infra/gw") {
			t.Errorf("%s: the render for infra/gw did not change", what)
		}
	}
}
