package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const example = "../../examples/ingress/haptic-config.yaml"

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	cfg := "apiVersion: haproxy-haptic.org/v1alpha1\nkind: HAProxyTemplateConfig\nmetadata: {name: t}\nspec:\n" + body
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const minimalCfg = `  haproxyConfig:
    template: |
      global
      defaults
        mode http
        timeout connect 1s
        timeout client 1s
        timeout server 1s
      frontend f
        bind :8080
        {{ render "extra" }}
`

func TestValidateExamplePasses(t *testing.T) {
	code, out, errOut := runCLI(t, "validate", "-f", example)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "✓ routes-an-ingress") || !strings.Contains(out, "\n4 passed, 0 failed\n") {
		t.Fatalf("summary:\n%s", out)
	}
}

func TestValidateOutputsAndTraces(t *testing.T) {
	code, out, _ := runCLI(t, "validate", "-f", example, "--test", "routes-an-ingress", "-o", "json",
		"--trace-templates", "--profile-includes", "--dump-rendered")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"=== trace routes-an-ingress", "map:exact.map", "=== include profile routes-an-ingress", "    backends-ingress ",
		"=== routes-an-ingress: haproxy.cfg\nglobal\n", "=== routes-an-ingress: map:prefix.map\necho.example.com/ ing_default_echo_http\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	report := out[strings.LastIndex(out, "\n{\n")+1:]
	var parsed struct {
		Passed int                     `json:"passed"`
		Tests  []struct{ Name string } `json:"tests"`
	}
	if err := json.Unmarshal([]byte(report), &parsed); err != nil || parsed.Passed != 1 || parsed.Tests[0].Name != "routes-an-ingress" {
		t.Fatalf("json report %v: %s", err, report)
	}
	code, out, _ = runCLI(t, "validate", "-f", example, "--test", "empty-cluster", "-o", "yaml")
	if code != exitOK || !strings.Contains(out, "name: empty-cluster") {
		t.Fatalf("yaml report: %d %s", code, out)
	}
}

func TestValidateExitCodes(t *testing.T) {
	failing := writeConfig(t, minimalCfg+`  templateSnippets:
    extra: {template: "# extra"}
  validationTests:
    wrong:
      assertions:
      - {type: contains, pattern: "nothing-like-this"}
    calls-fail:
      extraContext: {debug: true}
      assertions:
      - {type: haproxy_valid}
`)
	cases := []struct {
		name     string
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{"failing assertion", []string{"--test", "wrong"}, exitTestsFailed, "✗ wrong", ""},
		{"unknown test", []string{"--test", "nope"}, exitUsage, "", `"nope"`},
		{"missing haproxy", []string{"--test", "calls-fail", "--haproxy-binary", "/nonexistent/haproxy"}, exitUsage, "", "haproxy binary"},
		{"bad output", []string{"-o", "xml"}, exitUsage, "", "want summary, json or yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"validate", "-f", failing}, c.args...)...)
			if code != c.code || !strings.Contains(out, c.inStdout) || !strings.Contains(errOut, c.inStderr) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
		})
	}
}

func TestBadInputGivesOneClearMessage(t *testing.T) {
	cases := []struct {
		name, body string
		code       int
		want       []string
	}{
		{"malformed yaml", "  haproxyConfig: [unclosed\n", exitUsage, []string{"malformed YAML"}},
		{"unknown field", minimalCfg + "  templateSnipets: {}\n", exitUsage, []string{`unknown field "spec.templateSnipets"`}},
		{"template syntax error", minimalCfg + "  templateSnippets:\n    extra:\n      template: |\n        ok\n        {% if %}\n", exitUsage,
			[]string{"snippet extra:2", "{% if %}", "rendering haproxy.cfg"}},
		{"unknown snippet", strings.Replace(minimalCfg, `"extra"`, `"missing"`, 1), exitUsage, []string{"haproxy.cfg"}},
		{"template calls fail", minimalCfg + "  templateSnippets:\n    extra:\n      template: '{{ fail(\"refusing: bad input\") }}'\n  validationTests:\n    t: {}\n",
			exitTestsFailed, []string{"refusing: bad input"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "validate", "-f", writeConfig(t, c.body))
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, c.code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
			if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic:") {
				t.Fatalf("panicked:\n%s", errOut)
			}
		})
	}
	code, _, errOut := runCLI(t, "validate", "-f", "/nonexistent.yaml")
	if code != exitUsage || !strings.Contains(errOut, "nonexistent.yaml") {
		t.Fatalf("missing file: %d %s", code, errOut)
	}
	code, _, _ = runCLI(t, "validate")
	if code != exitUsage {
		t.Fatalf("no -f: %d", code)
	}
}

func TestMultipleFilesMergeInOrder(t *testing.T) {
	override := writeConfig(t, `  validationTests:
    tuning-from-extra-context:
      extraContext: {maxconn: 123}
      assertions:
      - {type: contains, pattern: 'maxconn 123'}
`)
	code, out, errOut := runCLI(t, "validate", "-f", example, "-f", override, "--test", "tuning-from-extra-context")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestBenchmarkReportsTimings(t *testing.T) {
	code, out, errOut := runCLI(t, "benchmark", "-f", example, "--test", "routes-an-ingress", "--iterations", "3", "--profile-includes")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"compile: ", "test routes-an-ingress (", "3 iterations", "renders/s", "map:exact.map", "min ", "median ", "max ", "slowest includes", "backends-ingress"} {
		if !strings.Contains(out, want) {
			t.Errorf("benchmark output lacks %q:\n%s", want, out)
		}
	}
	if code, _, _ := runCLI(t, "benchmark", "-f", example, "--iterations", "0"); code != exitUsage {
		t.Errorf("--iterations 0: exit %d", code)
	}
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	if code, out, errOut := runCLI(t, "benchmark", "-f", example, "--test", "routes-an-ingress", "--cpu-profile", prof); code != exitOK {
		t.Fatalf("--cpu-profile: exit %d\n%s%s", code, out, errOut)
	}
	if p, err := os.ReadFile(prof); err != nil || len(p) == 0 {
		t.Errorf("--cpu-profile wrote no profile: %v", err)
	}
	if code, _, _ := runCLI(t, "benchmark", "-f", example, "--cpu-profile", filepath.Join(prof, "no", "such")); code != exitUsage {
		t.Errorf("--cpu-profile to a path that cannot be created: exit %d", code)
	}
}

func TestRenderWritesBundle(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "render", "-f", example, "--test", "routes-an-ingress", "--check", "-o", dir)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "etc/haproxy/haproxy.cfg"))
	if err != nil || !strings.Contains(string(cfg), filepath.Join(dir, "etc/haproxy/maps/exact.map")) {
		t.Fatalf("haproxy.cfg %v:\n%s", err, cfg)
	}
	m, err := os.ReadFile(filepath.Join(dir, "etc/haproxy/maps/prefix.map"))
	if err != nil || string(m) != "echo.example.com/ ing_default_echo_http\n" {
		t.Fatalf("prefix.map %v: %q", err, m)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != exitOK || !strings.HasPrefix(out, "haptic ") {
		t.Fatalf("%d %q", code, out)
	}
}

// haptic render shows the templates' notes after the files it wrote; they are in none.
func TestRenderShowsNotes(t *testing.T) {
	cfg := writeConfig(t, `  haproxyConfig:
    template: |
      global
      {% note("Gateway", "apps", "gw", "web", "PortUnavailable", "port 80 belongs to gateway default/old") %}
      defaults
        mode http
`)
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "render", "-f", cfg, "-o", dir)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if want := "note: Gateway apps/gw [web] PortUnavailable: port 80 belongs to gateway default/old\n"; !strings.HasSuffix(out, want) {
		t.Errorf("output %q does not end with %q", out, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "etc/haproxy/haproxy.cfg")); strings.Contains(string(b), "PortUnavailable") {
		t.Errorf("the note is in haproxy.cfg:\n%s", b)
	}
}
