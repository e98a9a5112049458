package controller

import (
	"testing"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/metrics"
)

func TestObserveDivergence(t *testing.T) {
	m := metrics.New()
	observeDivergence(m, deploy.Outcome{Mode: deploy.ModeRuntime})
	observeDivergence(m, deploy.Outcome{Mode: deploy.ModeRuntime, Reloaded: true, ServerDivergence: 3, MapDivergence: 2})
	observeDivergence(m, deploy.Outcome{Mode: deploy.ModeRuntime, Reloaded: true, MapDivergence: 1})
	observeVerify(m, agentapi.State{})
	observeVerify(m, agentapi.State{LastVerify: &agentapi.VerifyRecord{Maps: 4, MapDivergence: 2}})
	observeVerify(m, agentapi.State{LastVerify: &agentapi.VerifyRecord{Servers: 9, ServerDivergence: 2}})
	if got := counter(t, m, "haptic_deployment_runtime_divergence_total"); got != 2 {
		t.Errorf("deployment/runtime divergence %v, want 2 (a deployment and a verification)", got)
	}
	if got := counter(t, m, "haptic_runtime_map_divergence_total"); got != 5 {
		t.Errorf("runtime-map divergence %v, want 5 maps", got)
	}
}

func counter(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}
