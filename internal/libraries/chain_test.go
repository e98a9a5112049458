package libraries

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/golden"
	"github.com/haproxy-haptic/haptic/internal/plan"
)

// chainStep is one change a user makes, applied to the previous step's objects.
type chainStep struct {
	change string
	apply  func(raw map[string][]map[string]any)
}

// chainView is what one step costs on a running HAProxy 2.6: the golden record.
type chainView struct {
	Change  string            `json:"change"`
	Reload  bool              `json:"reload"`
	Reasons []string          `json:"reasons,omitempty"`
	Ops     []json.RawMessage `json:"ops,omitempty"`
	Files   []string          `json:"files,omitempty"`
}

var caps26 = plan.Capabilities{Version: "2.6.12-1+deb12u4", DynamicServers: true, RuntimeMaps: true, SSLRuntime: true}

// TestLibraryChainsGolden renders the shipped libraries through a sequence of user
// changes and plans each against what the previous step left running, as the
// controller does: render → bundle → plan, chained. The golden files show which
// changes are runtime operations and which reload, so a library edit that turns a
// route change into a reload shows up as a diff.
func TestLibraryChainsGolden(t *testing.T) {
	p := load(t)
	chains := map[string]struct {
		start map[string][]map[string]any
		steps []chainStep
	}{
		"ingress": {start: ingresses(3), steps: []chainStep{
			{"add an Ingress with its own Service", func(raw map[string][]map[string]any) {
				more := ingresses(4)
				for _, r := range []string{"ingresses", "services", "endpoints"} {
					raw[r] = append(raw[r], more[r][3])
				}
			}},
			{"scale a Service to two endpoints", addEndpoint("endpoints", 0, "10.0.9.9")},
			{"remove an Ingress and its Service", removeIndex(1, "ingresses", "services", "endpoints")},
			{"set a server timeout on an Ingress", func(raw map[string][]map[string]any) {
				setAnnotation(raw["ingresses"][0], "haproxy-haptic.org/timeout-server", "45s")
			}},
		}},
		"gateway": {start: gatewayFixture(3), steps: []chainStep{
			{"add an HTTPRoute with its own Service", func(raw map[string][]map[string]any) {
				more := gatewayFixture(4)
				for _, r := range []string{"http-routes", "services", "endpoints"} {
					raw[r] = append(raw[r], more[r][3])
				}
			}},
			{"scale a Service to two endpoints", addEndpoint("endpoints", 0, "10.0.9.9")},
			{"add an HTTPRoute with a header match", func(raw map[string][]map[string]any) {
				raw["http-routes"] = append(raw["http-routes"], gatewayRoute("ns0", "canary", "canary.example.com", "app-0",
					[]any{map[string]any{"name": "x-canary", "value": "yes"}}))
			}},
			{"remove an HTTPRoute and its Service", removeIndex(1, "http-routes", "services", "endpoints")},
		}},
	}
	for name, chain := range chains {
		t.Run(name, func(t *testing.T) {
			// Each render gets its own copy: the snapshot's objects are immutable (the
			// incremental renderer knows an object by identity), as informers keep them.
			raw := chain.start
			running := plan.Running{Bundle: renderFixture(t, p, cloneRaw(raw)).Bundle}
			var views []chainView
			for _, step := range chain.steps {
				step.apply(raw)
				desired := renderFixture(t, p, cloneRaw(raw)).Bundle
				res := plan.Plan(running, desired, caps26)
				views = append(views, viewOf(t, step.change, res))
				if res.Reload {
					running = plan.Running{Bundle: desired}
				} else {
					running = *res.Running
				}
			}
			golden.AssertJSON(t, filepath.Join("testdata", "chains", name+".json"), views)
		})
	}
}

func viewOf(t *testing.T, change string, res plan.Result) chainView {
	t.Helper()
	v := chainView{Change: change, Reload: res.Reload}
	for _, r := range res.Reasons {
		v.Reasons = append(v.Reasons, r.String())
	}
	for _, op := range res.Ops {
		b, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		v.Ops = append(v.Ops, b)
	}
	for _, f := range res.Files {
		v.Files = append(v.Files, f.Target())
	}
	return v
}

func addEndpoint(resource string, i int, address string) func(map[string][]map[string]any) {
	return func(raw map[string][]map[string]any) {
		slice := raw[resource][i]
		slice["endpoints"] = append(slice["endpoints"].([]any), map[string]any{
			"addresses": []any{address}, "conditions": map[string]any{"ready": true},
		})
	}
}

func removeIndex(i int, resources ...string) func(map[string][]map[string]any) {
	return func(raw map[string][]map[string]any) {
		for _, r := range resources {
			if i >= len(raw[r]) {
				panic(fmt.Sprintf("%s has no item %d", r, i))
			}
			raw[r] = append(raw[r][:i:i], raw[r][i+1:]...)
		}
	}
}

func setAnnotation(obj map[string]any, key, value string) {
	meta := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[key] = value
}
