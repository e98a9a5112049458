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
	haproxy := r.named(t, "Deployment", "haptic-haproxy")
	assertSeparateContainers(t, haproxy)
	env, _ := namedContainer(t, haproxy, "agent")["env"].([]any)
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

// assertSeparateContainers: HAProxy and the agent run in containers of their own,
// so that a restart of the agent's container leaves HAProxy serving (resilience
// case 4) — HAProxy's container launches HAProxy from the agent's launch file, the
// agent adopts it; both see the state volume at the same path (the launch file's
// paths are the agent's) and share the pod's PID namespace (the agent checks the
// master named by HAProxy's pid file). Only the agent container has probes that
// could restart it, and its liveness does not depend on HAProxy.
func assertSeparateContainers(t *testing.T, d map[string]any) {
	t.Helper()
	if field(d, "spec", "template", "spec", "shareProcessNamespace") != true {
		t.Error("shareProcessNamespace is not true")
	}
	haproxy, agent := namedContainer(t, d, "haproxy"), namedContainer(t, d, "agent")
	if args := stringList(haproxy["args"]); len(args) == 0 || args[0] != "launch" ||
		!slices.Contains(args, "--state-dir=/var/lib/haptic-agent") {
		t.Errorf("haproxy container args %v, want launch --state-dir=/var/lib/haptic-agent", args)
	}
	if args := stringList(agent["args"]); !slices.Contains(args, "--external-haproxy") ||
		!slices.Contains(args, "--state-dir=/var/lib/haptic-agent") {
		t.Errorf("agent args %v lack --external-haproxy or the state dir", args)
	}
	for _, c := range []map[string]any{haproxy, agent} {
		mounts, _ := c["volumeMounts"].([]any)
		for _, want := range [][2]string{{"state", "/var/lib/haptic-agent"}, {"config", "/etc/haproxy"}} {
			if !slices.ContainsFunc(mounts, func(m any) bool { return field(m, "name") == want[0] && field(m, "mountPath") == want[1] }) {
				t.Errorf("container %v does not mount %s at %s", c["name"], want[0], want[1])
			}
		}
	}
	if haproxy["livenessProbe"] != nil || haproxy["readinessProbe"] != nil {
		t.Error("the haproxy container has probes: its master exiting ends it anyway")
	}
	if p := field(agent, "livenessProbe", "httpGet", "path"); p != "/livez" {
		t.Errorf("agent liveness %v, want /livez (not HAProxy's health)", p)
	}
	if p := field(agent, "readinessProbe", "httpGet", "path"); p != "/healthz" {
		t.Errorf("agent readiness %v, want /healthz (ready while the master runs)", p)
	}
}

func namedContainer(t *testing.T, d map[string]any, name string) map[string]any {
	t.Helper()
	for _, c := range containers(t, d) {
		if c["name"] == name {
			return c
		}
	}
	t.Fatalf("no container %s", name)
	return nil
}
