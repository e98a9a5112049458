package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Knobs are the runner's settings, read from BENCH_* environment variables.
type Knobs struct {
	Scenarios              []string      `json:"scenarios"`
	OutputDir              string        `json:"output_dir"`
	Gateways               []Gateway     `json:"gateways"`
	ProbeRoutes            int           `json:"probe_routes"`
	ProbeTimeout           time.Duration `json:"-"`
	RouteChangeIterations  int           `json:"routechange_iterations"`
	RouteChangeGrace       time.Duration `json:"-"`
	RouteChangeTimeout     time.Duration `json:"-"`
	ScaleNamespaces        int           `json:"scale_namespaces"`
	ScaleRoutesPerNS       int           `json:"scale_routes_per_namespace"`
	ScaleDuration          time.Duration `json:"-"`
	ScaleStartupTimeout    time.Duration `json:"-"`
	DeployInterval         time.Duration `json:"-"` // 0: the chart default
	WatchDebounce          time.Duration `json:"-"` // -1: the controller default
	KeepCluster            bool          `json:"keep_cluster"`
	HAProxyReplicas        int           `json:"haproxy_replicas"`
	ProbeIntervalFixed     time.Duration `json:"-"` // the probe's poll interval (5 ms, as upstream)
	RouteChangeMaxRequests int           `json:"routechange_max_requests"`
}

// Gateway is one namespace/name target.
type Gateway struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (g Gateway) String() string { return g.Namespace + "/" + g.Name }

// ScenarioNames are the scenarios a run has by default, in their order.
var ScenarioNames = []string{"probe", "scale", "routechange"}

// ExtraScenarios run only when BENCH_SCENARIOS names them: probe-ingress is the
// probe with the ingress library (Ingresses through the default fleet).
var ExtraScenarios = []string{"probe-ingress"}

// LoadKnobs reads the knobs from getenv (os.Getenv), with the defaults of
// docs/benchmarks.md. now names the default output directory.
func LoadKnobs(getenv func(string) string, now time.Time, pid int) (Knobs, error) {
	k := Knobs{
		Scenarios:              ScenarioNames,
		OutputDir:              fmt.Sprintf("artifacts/gateway-api-bench/%s-%d", now.UTC().Format("20060102t150405z"), pid),
		Gateways:               []Gateway{{Namespace: "haptic-bench", Name: "haptic"}},
		ProbeRoutes:            3000,
		ProbeTimeout:           6 * time.Hour,
		RouteChangeIterations:  20,
		RouteChangeGrace:       200 * time.Millisecond,
		RouteChangeTimeout:     10 * time.Minute,
		ScaleNamespaces:        50,
		ScaleRoutesPerNS:       100,
		ScaleDuration:          10 * time.Minute,
		ScaleStartupTimeout:    20 * time.Minute,
		WatchDebounce:          -1,
		HAProxyReplicas:        2,
		ProbeIntervalFixed:     5 * time.Millisecond,
		RouteChangeMaxRequests: 500000,
	}
	var errs []string
	str := func(name string, set func(string) error) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		if err := set(v); err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q: %v", name, v, err))
		}
	}
	positive := func(dst *int) func(string) error {
		return func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("want a positive integer")
			}
			*dst = n
			return nil
		}
	}
	duration := func(dst *time.Duration) func(string) error {
		return func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("want a positive duration such as 200ms or 10m")
			}
			*dst = d
			return nil
		}
	}
	str("BENCH_SCENARIOS", func(v string) error {
		var out []string
		for _, s := range strings.Split(v, ",") {
			s = strings.TrimSpace(s)
			if !contains(ScenarioNames, s) && !contains(ExtraScenarios, s) {
				return fmt.Errorf("unknown scenario %q (want %s)", s, strings.Join(append(append([]string{}, ScenarioNames...), ExtraScenarios...), ","))
			}
			if contains(out, s) {
				return fmt.Errorf("scenario %q twice", s)
			}
			out = append(out, s)
		}
		k.Scenarios = out
		return nil
	})
	str("BENCH_OUTPUT_DIR", func(v string) error { k.OutputDir = v; return nil })
	str("BENCH_GATEWAYS", func(v string) error {
		var out []Gateway
		for _, s := range strings.Split(v, ",") {
			ns, name, ok := strings.Cut(strings.TrimSpace(s), "/")
			if !ok || !dnsLabel(ns) || !dnsLabel(name) {
				return fmt.Errorf("want namespace/name entries of DNS labels")
			}
			out = append(out, Gateway{Namespace: ns, Name: name})
		}
		k.Gateways = out
		return nil
	})
	str("BENCH_PROBE_ROUTES", positive(&k.ProbeRoutes))
	str("BENCH_PROBE_TIMEOUT", duration(&k.ProbeTimeout))
	str("BENCH_ROUTECHANGE_ITERATIONS", positive(&k.RouteChangeIterations))
	str("BENCH_ROUTECHANGE_GRACE_PERIOD", duration(&k.RouteChangeGrace))
	str("BENCH_ROUTECHANGE_GRACE", duration(&k.RouteChangeGrace))
	str("BENCH_ROUTECHANGE_TIMEOUT", duration(&k.RouteChangeTimeout))
	str("BENCH_SCALE_NAMESPACES", positive(&k.ScaleNamespaces))
	str("BENCH_SCALE_ROUTES_PER_NAMESPACE", positive(&k.ScaleRoutesPerNS))
	str("BENCH_SCALE_DURATION", duration(&k.ScaleDuration))
	str("BENCH_SCALE_STARTUP_TIMEOUT", duration(&k.ScaleStartupTimeout))
	str("BENCH_DEPLOY_INTERVAL", duration(&k.DeployInterval))
	str("BENCH_WATCH_DEBOUNCE", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration such as 100ms (0 turns debouncing off)")
		}
		k.WatchDebounce = d
		return nil
	})
	str("BENCH_HAPROXY_REPLICAS", positive(&k.HAProxyReplicas))
	str("BENCH_KEEP_CLUSTER", func(v string) error {
		b, err := strconv.ParseBool(v)
		k.KeepCluster = b
		return err
	})
	if len(errs) > 0 {
		return Knobs{}, fmt.Errorf("bench knobs: %s", strings.Join(errs, "; "))
	}
	return k, nil
}

// Has reports whether scenario is selected.
func (k Knobs) Has(scenario string) bool { return contains(k.Scenarios, scenario) }

// Deviations lists what differs from the product-default profile (the published
// workload sizes and the chart's timings); an empty list means a default run.
func (k Knobs) Deviations() []string {
	var d []string
	if k.ProbeRoutes != 3000 && (k.Has("probe") || k.Has("probe-ingress")) {
		d = append(d, fmt.Sprintf("probe routes %d (published: 3000)", k.ProbeRoutes))
	}
	if k.Has("routechange") && (k.RouteChangeIterations != 20 || k.RouteChangeGrace != 200*time.Millisecond) {
		d = append(d, fmt.Sprintf("routechange %d × %s (published: 20 × 200ms)", k.RouteChangeIterations, k.RouteChangeGrace))
	}
	if k.Has("scale") && (k.ScaleNamespaces != 50 || k.ScaleRoutesPerNS != 100) {
		d = append(d, fmt.Sprintf("scale %d × %d (published: 50 × 100)", k.ScaleNamespaces, k.ScaleRoutesPerNS))
	}
	if k.Has("scale") && k.ScaleDuration != 10*time.Minute {
		d = append(d, fmt.Sprintf("scale window %s (published: 10m)", k.ScaleDuration))
	}
	if k.DeployInterval != 0 {
		d = append(d, fmt.Sprintf("minDeploymentInterval %s (chart default)", k.DeployInterval))
	}
	if k.WatchDebounce >= 0 {
		d = append(d, fmt.Sprintf("watch debounce %s (controller default 100ms)", k.WatchDebounce))
	}
	return d
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// dnsLabel reports whether s is an RFC 1123 label (namespace and Gateway names).
func dnsLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// MarshalText lets a Gateway key a JSON object ("namespace/name").
func (g Gateway) MarshalText() ([]byte, error) { return []byte(g.String()), nil }
