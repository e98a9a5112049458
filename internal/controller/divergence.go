package controller

import (
	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/metrics"
)

// observeDivergence counts what the agent's read-back after a runtime apply found:
// a deployment with diverging servers counts once in
// haptic_deployment_runtime_divergence_total (it counts deployments), every
// diverging map once in haptic_runtime_map_divergence_total. The agent has already
// reloaded the pod back to its files.
func observeDivergence(m *metrics.Metrics, o deploy.Outcome) {
	if o.ServerDivergence > 0 {
		m.DeploymentRuntimeDivergence.Inc()
	}
	if o.MapDivergence > 0 {
		m.RuntimeMapDivergence.Add(float64(o.MapDivergence))
	}
}

// observeVerify counts what the runtime verification a drift check ran on a pod
// found (GET /v1/state?verify=runtime; the agent corrected it): every diverging map,
// and one deployment/runtime divergence when servers diverged.
func observeVerify(m *metrics.Metrics, st agentapi.State) {
	if st.LastVerify == nil {
		return
	}
	if st.LastVerify.MapDivergence > 0 {
		m.RuntimeMapDivergence.Add(float64(st.LastVerify.MapDivergence))
	}
	if st.LastVerify.ServerDivergence > 0 {
		m.DeploymentRuntimeDivergence.Inc()
	}
}
