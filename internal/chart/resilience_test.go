package chart

import (
	"slices"
	"testing"
)

// TestResilientDefaults: the chart's defaults survive a controller restart — two
// replicas spread over nodes, a PodDisruptionBudget, lease timings passed to the
// controller and failurePolicy Fail; one replica renders no budget.
func TestResilientDefaults(t *testing.T) {
	t.Parallel()
	r := renderChart(t, nil, nil)
	d := r.named(t, "Deployment", "haptic-controller")
	if got := field(d, "spec", "replicas"); normalize(t, got) != normalize(t, 2) {
		t.Errorf("controller replicas %v, want 2", got)
	}
	term := field(d, "spec", "template", "spec", "affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
	terms, _ := term.([]any)
	if len(terms) != 1 || field(terms[0], "podAffinityTerm", "topologyKey") != "kubernetes.io/hostname" ||
		field(terms[0], "podAffinityTerm", "labelSelector", "matchLabels", "app.kubernetes.io/component") != "controller" {
		t.Errorf("anti-affinity %v", term)
	}
	args := stringList(containers(t, d)[0]["args"])
	for _, want := range []string{"--leader-lease-duration=15s", "--leader-renew-deadline=10s", "--leader-retry-period=2s"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	pdb := r.one(t, "PodDisruptionBudget")
	if field(pdb, "spec", "selector", "matchLabels", "app.kubernetes.io/component") != "controller" ||
		normalize(t, field(pdb, "spec", "minAvailable")) != normalize(t, 1) {
		t.Errorf("pdb %v", pdb)
	}
	hooks, _ := field(r.one(t, "ValidatingWebhookConfiguration"), "webhooks").([]any)
	for _, h := range hooks {
		if field(h, "failurePolicy") != "Fail" {
			t.Errorf("failurePolicy %v", field(h, "failurePolicy"))
		}
	}
	env, _ := containers(t, r.named(t, "Deployment", "haptic-haproxy"))[0]["env"].([]any)
	if !slices.ContainsFunc(env, func(e any) bool {
		return field(e, "name") == "HAPTIC_AGENT_RELOAD_VERIFICATION_TIMEOUT" && field(e, "value") == "60s"
	}) {
		t.Errorf("the agent is not given the reload verification timeout: %v", env)
	}

	single := renderChart(t, map[string]any{"controller": map[string]any{"replicas": 1, "podAntiAffinity": "hard",
		"webhook": map[string]any{"failurePolicy": "Ignore"}}}, nil)
	if n := len(single.find(t, "PodDisruptionBudget")); n != 0 {
		t.Errorf("one replica: %d budgets, want none (it would block every drain)", n)
	}
	d = single.named(t, "Deployment", "haptic-controller")
	if field(d, "spec", "template", "spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution") == nil {
		t.Errorf("podAntiAffinity hard not rendered")
	}
	hooks, _ = field(single.one(t, "ValidatingWebhookConfiguration"), "webhooks").([]any)
	for _, h := range hooks {
		if field(h, "failurePolicy") != "Ignore" {
			t.Errorf("failurePolicy %v, want Ignore", field(h, "failurePolicy"))
		}
	}
}
