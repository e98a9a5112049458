package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestMonitoringObjects checks the monitoring objects the chart renders when they are
// on: they carry the rules and dashboard files unchanged, select the release's pods,
// and are absent by default.
func TestMonitoringObjects(t *testing.T) {
	t.Parallel()
	for _, o := range renderChart(t, nil, nil).all(t) {
		switch o.kind() {
		case "ServiceMonitor", "PodMonitor", "PrometheusRule":
			t.Errorf("%s rendered with the default values", o.kind())
		}
	}
	r := renderChart(t, monitoringOn(), nil)

	rulesFile, err := os.ReadFile(filepath.Join(chartDir, "monitoring", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := yaml.Unmarshal(rulesFile, &want); err != nil {
		t.Fatal(err)
	}
	if got := field(r.one(t, "PrometheusRule"), "spec", "groups"); !equal(t, got, want) {
		t.Errorf("PrometheusRule spec.groups differ from monitoring/rules.yaml")
	}

	dashFile, err := os.ReadFile(filepath.Join(chartDir, "monitoring", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(dashFile, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var cm map[string]any
	for _, o := range r.all(t) {
		if o.kind() == "ConfigMap" && strings.HasSuffix(o.name(), "-dashboard") {
			cm = o.obj
		}
	}
	if cm == nil {
		t.Fatal("no dashboard ConfigMap")
	}
	if got, _ := field(cm, "data", "haptic.json").(string); strings.TrimSpace(got) != strings.TrimSpace(string(dashFile)) {
		t.Error("the dashboard ConfigMap does not hold monitoring/dashboard.json unchanged")
	}
	if field(cm, "metadata", "labels", "grafana_dashboard") != "1" {
		t.Errorf("dashboard ConfigMap labels %v, want grafana_dashboard: \"1\"", field(cm, "metadata", "labels"))
	}

	sm := r.one(t, "ServiceMonitor")
	if got := field(sm, "spec", "selector", "matchLabels", "app.kubernetes.io/component"); got != "controller" {
		t.Errorf("ServiceMonitor selects component %v, want controller", got)
	}
	if got := field(sm, "spec", "selector", "matchLabels", "app.kubernetes.io/instance"); got != releaseName {
		t.Errorf("ServiceMonitor selects instance %v, want the release", got)
	}
	endpoints, _ := field(sm, "spec", "endpoints").([]any)
	if len(endpoints) != 1 || field(endpoints[0].(map[string]any), "port") != "metrics" {
		t.Errorf("ServiceMonitor endpoints %v, want the metrics port", endpoints)
	}
	pm := r.one(t, "PodMonitor")
	if got := field(pm, "spec", "selector", "matchLabels", "app.kubernetes.io/part-of"); got != releaseName {
		t.Errorf("PodMonitor selects part-of %v, want the release's fullname", got)
	}
	pe, _ := field(pm, "spec", "podMetricsEndpoints").([]any)
	if len(pe) != 1 || field(pe[0].(map[string]any), "port") != "status" || field(pe[0].(map[string]any), "path") != "/metrics" {
		t.Errorf("PodMonitor endpoints %v, want the status port's /metrics", pe)
	}
}
