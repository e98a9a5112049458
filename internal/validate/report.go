package validate

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// WriteSummary prints one line per test ("✓ name (12ms)" or "✗ name (12ms)"), the
// render error and failed assertions of failed tests indented below it (every
// assertion and test descriptions when verbose), and a last line "N passed, M failed".
// Durations are left out when zero (see WithoutDurations).
func (r *Report) WriteSummary(w io.Writer, verbose bool) error {
	var sb strings.Builder
	for _, t := range r.Tests {
		mark := "✓"
		if !t.Passed {
			mark = "✗"
		}
		fmt.Fprintf(&sb, "%s %s%s\n", mark, t.Name, durationSuffix(t.Duration))
		if verbose && t.Description != "" {
			fmt.Fprintf(&sb, "    %s\n", t.Description)
		}
		if t.RenderError != "" && (!t.Passed || verbose) {
			fmt.Fprintf(&sb, "    render error: %s\n", indent(t.RenderError, "        "))
		}
		for _, a := range t.Assertions {
			if a.Passed && !verbose {
				continue
			}
			amark := "✓"
			if !a.Passed {
				amark = "✗"
			}
			fmt.Fprintf(&sb, "    %s %s\n", amark, a.Assertion)
			if a.Message != "" {
				fmt.Fprintf(&sb, "        %s\n", indent(a.Message, "        "))
			}
		}
	}
	fmt.Fprintf(&sb, "%d passed, %d failed\n", r.Passed, r.Failed)
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// indent prefixes every line but the first.
func indent(s, prefix string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}

func durationSuffix(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return " (" + formatDuration(d) + ")"
}

// formatDuration rounds to milliseconds, or microseconds below one millisecond.
func formatDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// WithoutDurations returns a copy of the report with every duration zeroed, for
// stable output (golden files, diffs between runs).
func (r *Report) WithoutDurations() *Report {
	out := *r
	out.Duration = 0
	out.Tests = make([]TestResult, len(r.Tests))
	for i, t := range r.Tests {
		t.Duration = 0
		out.Tests[i] = t
	}
	return &out
}

// MarshalJSON writes durations as strings ("12ms") rather than nanoseconds.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return json.Marshal(struct {
		plain
		Duration string `json:"duration,omitempty"`
	}{plain(r), formatDuration(r.Duration)})
}

// MarshalJSON writes the duration as a string ("12ms") rather than nanoseconds.
func (t TestResult) MarshalJSON() ([]byte, error) {
	type plain TestResult
	return json.Marshal(struct {
		plain
		Duration string `json:"duration,omitempty"`
	}{plain(t), formatDuration(t.Duration)})
}

// JSON is the report as indented JSON.
func (r *Report) JSON() ([]byte, error) {
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshal report: %w", err)
	}
	return append(out, '\n'), nil
}

// YAML is the report as YAML (same field names as JSON).
func (r *Report) YAML() ([]byte, error) {
	out, err := yaml.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("marshal report: %w", err)
	}
	return out, nil
}
