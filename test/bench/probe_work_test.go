//go:build benchgw

package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestControllerWork(t *testing.T) {
	before := map[string]float64{
		`haptic_fleet_renders_total{fleet="bench/gw"}`:                   10,
		`haptic_haproxy_reloads_total{pod="a"}`:                          3,
		`haptic_change_stage_seconds_sum{stage="rendered"}`:              1,
		`haptic_change_stage_seconds_count{stage="rendered"}`:            10,
		`haptic_fleet_renders_skipped_total{fleet="bench/gw"}`:           0,
		`haptic_change_stage_seconds_bucket{stage="rendered",le="1"}`:    10,
		`haptic_change_stage_seconds_bucket{stage="rendered",le="+Inf"}`: 10,
	}
	after := map[string]float64{
		`haptic_fleet_renders_total{fleet="bench/gw"}`:                     30,
		`haptic_fleet_renders_total{fleet="default"}`:                      2,
		`haptic_haproxy_reloads_total{pod="a"}`:                            4,
		`haptic_change_stage_seconds_sum{stage="rendered"}`:                1.5,
		`haptic_change_stage_seconds_count{stage="rendered"}`:              30,
		`haptic_fleet_renders_skipped_total{fleet="bench/gw"}`:             7,
		`haptic_change_stage_seconds_bucket{stage="rendered",le="1"}`:      30,
		`haptic_change_stage_seconds_bucket{stage="rendered",le="0.0025"}`: 5,
		`haptic_change_stage_seconds_bucket{stage="rendered",le="+Inf"}`:   30,
		`haptic_change_stage_seconds_bucket{stage="applied",le="+Inf"}`:    0,
	}
	got := controllerWork(before, after, 20)
	want := map[string]any{
		"renders_per_route_by_fleet": map[string]float64{"bench/gw": 1, "default": 0.1},
		"haproxy_reloads":            1.0,
		"change_stages": map[string]any{"rendered": map[string]any{"mean_ms": 25.0, "count": 20.0,
			"within_ms": map[string]float64{"1000": 20, "2.5": 5, "+Inf": 20}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("controllerWork = %v, want %v", got, want)
	}
}

func TestShortSocketPath(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "admin.sock")
	if got, err := shortSocketPath(short); err != nil || got != short {
		t.Errorf("short path: %q, %v; want it unchanged", got, err)
	}
	long := filepath.Join(dir, strings.Repeat("d", 120), "admin.sock")
	got, err := shortSocketPath(long)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(got) })
	if len(got) > maxSocketPath {
		t.Errorf("link %q is still too long", got)
	}
	if target, err := os.Readlink(got); err != nil || target != long {
		t.Errorf("link %q points to %q (%v), want %q", got, target, err, long)
	}
	if again, err := shortSocketPath(long); err != nil || again != got {
		t.Errorf("second call: %q, %v; want the same link %q", again, err, got)
	}
}
