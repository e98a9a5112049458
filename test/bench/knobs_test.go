package bench

import (
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadKnobsDefaults(t *testing.T) {
	k, err := LoadKnobs(env(nil), time.Date(2026, 12, 3, 10, 4, 5, 0, time.UTC), 42)
	if err != nil {
		t.Fatal(err)
	}
	if k.ProbeRoutes != 3000 || k.RouteChangeIterations != 20 || k.RouteChangeGrace != 200*time.Millisecond ||
		k.ScaleNamespaces != 50 || k.ScaleRoutesPerNS != 100 || k.ScaleDuration != 10*time.Minute {
		t.Errorf("defaults differ from the published workload: %+v", k)
	}
	if strings.Join(k.Scenarios, ",") != "probe,scale,routechange" {
		t.Errorf("scenarios %v", k.Scenarios)
	}
	if k.OutputDir != "artifacts/gateway-api-bench/20261203t100405z-42" {
		t.Errorf("output dir %q", k.OutputDir)
	}
	if len(k.Gateways) != 1 || k.Gateways[0].String() != "haptic-bench/haptic" {
		t.Errorf("gateways %v", k.Gateways)
	}
	if d := k.Deviations(); len(d) != 0 {
		t.Errorf("a default run has deviations: %v", d)
	}
}

func TestLoadKnobsOverrides(t *testing.T) {
	k, err := LoadKnobs(env(map[string]string{
		"BENCH_SCENARIOS": "routechange,probe,probe-ingress", "BENCH_PROBE_ROUTES": "300", "BENCH_GATEWAYS": "a/x, b/y",
		"BENCH_DEPLOY_INTERVAL": "100ms", "BENCH_WATCH_DEBOUNCE": "0", "BENCH_KEEP_CLUSTER": "true",
		"BENCH_ROUTECHANGE_GRACE_PERIOD": "1s",
	}), time.Now(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(k.Scenarios, ",") != "routechange,probe,probe-ingress" || k.ProbeRoutes != 300 || len(k.Gateways) != 2 ||
		k.DeployInterval != 100*time.Millisecond || k.WatchDebounce != 0 || !k.KeepCluster || k.RouteChangeGrace != time.Second {
		t.Errorf("overrides not applied: %+v", k)
	}
	if !k.Has("probe") || k.Has("scale") {
		t.Error("Has")
	}
	d := strings.Join(k.Deviations(), "; ")
	for _, want := range []string{"probe routes 300", "routechange 20 × 1s", "minDeploymentInterval 100ms", "watch debounce 0s"} {
		if !strings.Contains(d, want) {
			t.Errorf("deviations %q lack %q", d, want)
		}
	}
}

func TestLoadKnobsRejects(t *testing.T) {
	for name, v := range map[string]string{
		"BENCH_SCENARIOS": "probe,warp", "BENCH_PROBE_ROUTES": "-1", "BENCH_GATEWAYS": "noslash",
		"BENCH_SCALE_DURATION": "10", "BENCH_WATCH_DEBOUNCE": "-1s", "BENCH_KEEP_CLUSTER": "maybe",
	} {
		if _, err := LoadKnobs(env(map[string]string{name: v}), time.Now(), 1); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: error %v, want one naming the variable", name, v, err)
		}
	}
	if _, err := LoadKnobs(env(map[string]string{"BENCH_GATEWAYS": "Bad_NS/x"}), time.Now(), 1); err == nil {
		t.Error("a namespace that is not a DNS label was accepted")
	}
}
