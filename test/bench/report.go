package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// ScenarioResult is what one scenario measured and whether it could measure it.
type ScenarioResult struct {
	Name string `json:"name"`
	// MeasuredPass is HAPTIC's quality verdict on the scenario (no 5xx in the
	// probe, no failed request during route changes, zero adverse counters at scale).
	MeasuredPass bool `json:"measured_pass"`
	// Reasons says why MeasuredPass is false.
	Reasons []string `json:"reasons,omitempty"`
	// HarnessError is set when the scenario could not complete its evidence: the
	// run is invalid, not merely negative.
	HarnessError string    `json:"harness_error,omitempty"`
	Started      time.Time `json:"started"`
	Finished     time.Time `json:"finished"`
	// Headline holds the numbers worth reading first (see docs/benchmarks.md).
	Headline map[string]any `json:"headline,omitempty"`
}

// RunnerSummary is runner-summary.json.
type RunnerSummary struct {
	MeasuredResult struct {
		Pass              bool     `json:"pass"`
		NegativeScenarios []string `json:"negative_scenarios"`
	} `json:"measured_result"`
	Harness struct {
		Pass          bool     `json:"pass"`
		Errors        []string `json:"errors,omitempty"`
		FinalExitCode int      `json:"final_exit_code"`
	} `json:"harness"`
	Scenarios  []ScenarioResult `json:"scenarios"`
	SecretScan SecretScanReport `json:"artifact_secret_scan"`
	Started    time.Time        `json:"started"`
	Finished   time.Time        `json:"finished"`
}

// Summarise builds the runner summary: the harness passes when every scenario
// completed its evidence, nothing else failed (setup, cleanup) and the secret scan
// passed; the measured result passes when every scenario's quality verdict does.
// The exit code is 0 exactly when the harness passed.
func Summarise(results []ScenarioResult, harnessErrors []string, scan SecretScanReport, started, finished time.Time) RunnerSummary {
	var s RunnerSummary
	s.Scenarios = results
	s.SecretScan = scan
	s.Started, s.Finished = started, finished
	s.MeasuredResult.NegativeScenarios = []string{}
	errs := slices.Clone(harnessErrors)
	for _, r := range results {
		if r.HarnessError != "" {
			errs = append(errs, r.Name+": "+r.HarnessError)
		}
		if !r.MeasuredPass {
			s.MeasuredResult.NegativeScenarios = append(s.MeasuredResult.NegativeScenarios, r.Name)
		}
	}
	if !scan.Pass {
		errs = append(errs, fmt.Sprintf("artifact secret scan failed: %d match(es) %s", len(scan.Matches), scan.Error))
	}
	s.MeasuredResult.Pass = len(s.MeasuredResult.NegativeScenarios) == 0 && len(results) > 0
	s.Harness.Errors = errs
	s.Harness.Pass = len(errs) == 0
	if !s.Harness.Pass {
		s.Harness.FinalExitCode = 1
	}
	return s
}

// Metadata is metadata.json: what was measured, with which code and settings.
type Metadata struct {
	Commit   string            `json:"commit"`
	Dirty    bool              `json:"dirty"`
	Versions map[string]string `json:"versions"`
	Knobs    Knobs             `json:"knobs"`
	// EffectiveTimings are the HAPTIC timings the run used (requested value or the
	// default that applied), as durations.
	EffectiveTimings map[string]string `json:"effective_timings"`
	// ProfileDeviations lists what differs from the product-default profile.
	ProfileDeviations []string `json:"profile_deviations"`
	// PublishedWorkloadInputsMatch: the workload sizes equal the published ones.
	PublishedWorkloadInputsMatch bool `json:"published_workload_inputs_match"`
	// ControlledDefaultProfile: published sizes, default timings and a clean tree.
	ControlledDefaultProfile bool `json:"controlled_default_profile"`
	// Methodology notes where this harness differs from the upstream programs.
	Methodology []string  `json:"methodology"`
	Host        HostFacts `json:"host"`
	Generated   time.Time `json:"generated"`
}

// HostFacts describes the machine the numbers come from.
type HostFacts struct {
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model"`
	MemoryMB int    `json:"memory_mb"`
	LoadAvg  string `json:"loadavg_at_start"`
}

// WriteJSON writes v as indented JSON to dir/name, creating parent directories.
func WriteJSON(dir, name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
