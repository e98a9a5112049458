package chart

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// ruleGroup is one group of charts/haptic/monitoring/rules.yaml.
type ruleGroup struct {
	Name  string `json:"name"`
	Rules []struct {
		Alert       string            `json:"alert"`
		Expr        string            `json:"expr"`
		For         string            `json:"for"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"rules"`
}

// labelValuesQuery is a Grafana variable query: label_values(metric, label).
var labelValuesQuery = regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*\w+\s*\)$`)

// chartExpressions returns every PromQL expression of the chart's rules and
// dashboard, keyed by where it is.
func chartExpressions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, g := range readRules(t) {
		for _, r := range g.Rules {
			out["rules.yaml "+r.Alert] = r.Expr
		}
	}
	data, err := os.ReadFile(filepath.Join(chartDir, "monitoring", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "expr" {
					out["dashboard.json "+path] = s
				}
				if s, ok := x.(string); ok && k == "definition" {
					m := labelValuesQuery.FindStringSubmatch(s)
					if m == nil {
						t.Errorf("dashboard.json %s: variable query %q is not label_values(metric, label)", path, s)
						continue
					}
					out["dashboard.json "+path+" variable"] = m[1]
				}
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	walk("", dash)
	return out
}

func readRules(t *testing.T) []ruleGroup {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir, "monitoring", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var groups []ruleGroup
	if err := yaml.UnmarshalStrict(data, &groups); err != nil {
		t.Fatalf("rules.yaml: %v", err)
	}
	return groups
}

// TestMonitoringFiles checks the rules and the dashboard without a cluster: every
// alert is complete, every expression is balanced and names at least one metric.
func TestMonitoringFiles(t *testing.T) {
	t.Parallel()
	alerts := map[string]bool{}
	for _, g := range readRules(t) {
		for _, r := range g.Rules {
			if r.Alert == "" || alerts[r.Alert] {
				t.Errorf("group %s: an alert without a name or a duplicate name %q", g.Name, r.Alert)
			}
			alerts[r.Alert] = true
			if r.Labels["severity"] != "warning" && r.Labels["severity"] != "critical" {
				t.Errorf("%s: severity %q, want warning or critical", r.Alert, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: summary and description annotations are required", r.Alert)
			}
		}
	}
	if len(alerts) < 8 {
		t.Errorf("%d alerts, want the controller's and HAProxy's (at least 8)", len(alerts))
	}
	exprs := chartExpressions(t)
	for where, expr := range exprs {
		if strings.Count(expr, "(") != strings.Count(expr, ")") || strings.Count(expr, "{") != strings.Count(expr, "}") ||
			strings.Count(expr, "[") != strings.Count(expr, "]") {
			t.Errorf("%s: unbalanced brackets in %q", where, expr)
		}
		if len(metricNames(expr)) == 0 {
			t.Errorf("%s: no metric in %q", where, expr)
		}
	}
	if len(exprs) < 20 {
		t.Errorf("%d expressions found, want the dashboard's and the rules'", len(exprs))
	}
}
