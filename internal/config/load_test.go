package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
)

const header = "apiVersion: haproxy-haptic.org/v1alpha1\nkind: HAProxyTemplateConfig\nmetadata:\n  name: t\nspec:\n"

func TestDefaults(t *testing.T) {
	cfg, err := Parse("t", []byte(header+`  haproxyConfig:
    template: "global"
  watchedResources:
    ingresses:
      apiVersion: networking.k8s.io/v1
      resources: ingresses
    slices:
      apiVersion: discovery.k8s.io/v1
      resources: endpointslices
      debounceInterval: "0"
    bad:
      apiVersion: v1
      resources: services
      debounceInterval: "soon"
  templateSnippets:
    s:
      template: x
`))
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Spec.Dataplane.ParsedDurations()
	want := v1alpha1.Durations{MinDeployment: 2 * time.Second, DriftPrevention: 60 * time.Second, ConfigPublish: 10 * time.Second, ReloadVerification: 60 * time.Second, Sync: 2 * time.Minute}
	if d != want {
		t.Errorf("durations %+v, want %+v", d, want)
	}
	if cfg.Spec.Dataplane.Port != 5555 || cfg.Spec.Dataplane.MapsDir != "/etc/haproxy/maps" {
		t.Errorf("dataplane defaults: %+v", cfg.Spec.Dataplane)
	}
	w := cfg.Spec.WatchedResources
	if w["ingresses"].Store != "full" || w["ingresses"].DebounceDuration() != 100*time.Millisecond {
		t.Errorf("ingresses: %+v", w["ingresses"])
	}
	if w["slices"].DebounceDuration() != 0 {
		t.Errorf(`"0" must disable debouncing`)
	}
	if w["bad"].DebounceDuration() != 100*time.Millisecond {
		t.Errorf("invalid debounce must fall back to 100ms")
	}
	if *cfg.Spec.TemplateSnippets["s"].Priority != 100 {
		t.Errorf("snippet priority default")
	}
	if len(cfg.Spec.WatchedResourcesIgnoreFields) != 2 || cfg.Spec.TemplatingSettings.ResourceAccess != "typed" {
		t.Errorf("ignore fields / access: %+v", cfg.Spec)
	}
}

func TestValidationReportsEveryProblemWithPath(t *testing.T) {
	cases := []struct {
		name, spec string
		want       []string
	}{
		{"missing template", "  haproxyConfig: {template: \"\"}\n", []string{"spec.haproxyConfig.template: Required value"}},
		{"unknown field", "  haproxyConfig: {template: x}\n  bogus: 1\n  dataplane: {wat: 2}\n", []string{`unknown field "spec.bogus"`, `unknown field "spec.dataplane.wat"`}},
		{"wrong type", "  haproxyConfig: {template: x}\n  dataplane: {port: \"x\"}\n", []string{"spec.dataplane.port"}},
		{"verification ceiling", "  haproxyConfig: {template: x}\n  dataplane: {reloadVerificationTimeout: 61s, syncTimeout: forever}\n",
			[]string{"spec.dataplane.reloadVerificationTimeout: Invalid value: \"61s\": must be at most 1m0s", "spec.dataplane.syncTimeout: Invalid value: \"forever\""}},
		{"label selector", "  haproxyConfig: {template: x}\n  watchedResources:\n    a: {apiVersion: v1, resources: services, labelSelector: \"app in (x)\"}\n    b: {apiVersion: v1, resources: services, labelSelector: \"app!=x\"}\n",
			[]string{"spec.watchedResources[a].labelSelector", "spec.watchedResources[b].labelSelector", "equality only"}},
		{"store", "  haproxyConfig: {template: x}\n  watchedResources:\n    a: {apiVersion: v1, resources: secrets, store: lazy}\n", []string{`spec.watchedResources[a].store: Unsupported value: "lazy"`}},
		{"missing resource", "  haproxyConfig: {template: x}\n  watchedResources:\n    a: {apiVersion: v1}\n", []string{"spec.watchedResources[a].resources: Required value"}},
		{"assertions", "  haproxyConfig: {template: x}\n  validationTests:\n    t1:\n      fixtures: {nope: []}\n      assertions:\n      - {type: contains}\n      - {type: frobnicate}\n      - {type: equals, target: \"map:missing.map\"}\n      - {type: match_count, pattern: x, expected: many}\n",
			[]string{"spec.validationTests[t1].fixtures[nope]: Not found", "spec.validationTests[t1].assertions[0].pattern: Required value", `assertions[1].type: Unsupported value: "frobnicate"`, "assertions[2].target", "assertions[3].expected"}},
		{"file names", "  haproxyConfig: {template: x}\n  maps:\n    \"../evil.map\": {template: x}\n", []string{"spec.maps[../evil.map]: Invalid value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(header+c.spec))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want *Error, got %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestMalformedYAML(t *testing.T) {
	_, err := Parse("bad.yaml", []byte(header+"  haproxyConfig: [unclosed\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml") || !strings.Contains(err.Error(), "malformed YAML") {
		t.Fatalf("got %v", err)
	}
	_, err = Parse("empty.yaml", []byte("kind: ConfigMap\napiVersion: v1\n"))
	if err == nil || !strings.Contains(err.Error(), "no HAProxyTemplateConfig document") {
		t.Fatalf("got %v", err)
	}
}

func TestMergeLaterWins(t *testing.T) {
	base := header + "  haproxyConfig: {template: base}\n  templateSnippets:\n    a: {template: A}\n    b: {template: B}\n"
	over := "---\n# comment only\n---\napiVersion: v1\nkind: ConfigMap\n---\n" + header + "  templateSnippets:\n    b: {template: B2}\n    c: {template: C}\n"
	cfg, err := Parse("multi", []byte(base+over))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Spec.TemplateSnippets
	if cfg.Spec.HAProxyConfig.Template != "base" || s["a"].Template != "A" || s["b"].Template != "B2" || s["c"].Template != "C" {
		t.Fatalf("merged %+v", s)
	}
}

func TestDuplicateKeysRejected(t *testing.T) {
	doc := "apiVersion: haproxy-haptic.org/v1alpha1\nkind: HAProxyTemplateConfig\nspec:\n  validationTests:\n    a: {description: one}\n    a: {description: two}\n"
	_, err := Parse("dup.yaml", []byte(doc))
	if err == nil || !strings.Contains(err.Error(), "already set") && !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("a duplicate key must be an error, got %v", err)
	}
}
