package v1alpha1

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	resourceNamePattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]*$`)
	labelPairPattern    = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?=[-A-Za-z0-9_.]*$`)
	fileNamePattern     = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_.-]*$`)
)

// Validate reports every problem of the spec with its field path. Call Default first.
func (c *HAProxyTemplateConfig) Validate() field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &c.Spec
	if strings.TrimSpace(s.HAProxyConfig.Template) == "" {
		errs = append(errs, field.Required(spec.Child("haproxyConfig", "template"), "the haproxy.cfg template is required"))
	}
	errs = append(errs, validateDataplane(spec.Child("dataplane"), s.Dataplane)...)
	for _, name := range sortedKeys(s.WatchedResources) {
		errs = append(errs, validateWatched(spec.Child("watchedResources").Key(name), name, s.WatchedResources[name])...)
	}
	for _, name := range sortedKeys(s.TemplateSnippets) {
		if strings.TrimSpace(s.TemplateSnippets[name].Template) == "" {
			errs = append(errs, field.Required(spec.Child("templateSnippets").Key(name).Child("template"), ""))
		}
	}
	errs = append(errs, validateFiles(spec.Child("maps"), s.Maps)...)
	errs = append(errs, validateFiles(spec.Child("files"), s.Files)...)
	errs = append(errs, validateFiles(spec.Child("sslCertificates"), s.SSLCertificates)...)
	errs = append(errs, validateFiles(spec.Child("crtLists"), s.CrtLists)...)
	errs = append(errs, validatePostProcessing(spec.Child("haproxyConfig", "postProcessing"), s.HAProxyConfig.PostProcessing)...)
	for _, name := range sortedKeys(s.ValidationTests) {
		errs = append(errs, validateTest(spec.Child("validationTests").Key(name), s.ValidationTests[name], s)...)
	}
	return errs
}

func validateDataplane(p *field.Path, d DataplaneSettings) field.ErrorList {
	var errs field.ErrorList
	durations := []struct {
		name, value string
		max         time.Duration
	}{
		{"minDeploymentInterval", d.MinDeploymentInterval, 0},
		{"driftPreventionInterval", d.DriftPreventionInterval, 0},
		{"configPublishInterval", d.ConfigPublishInterval, 0},
		{"reloadVerificationTimeout", d.ReloadVerificationTimeout, MaxReloadVerificationTimeout},
		{"syncTimeout", d.SyncTimeout, 0},
	}
	for _, f := range durations {
		v, err := time.ParseDuration(f.value)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, "not a duration (e.g. 2s, 1m30s)"))
		case v < 0:
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, "must not be negative"))
		case f.max > 0 && v > f.max:
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, fmt.Sprintf("must be at most %s (the agent's ceiling)", f.max)))
		}
	}
	if d.Port <= 0 || d.Port > 65535 {
		errs = append(errs, field.Invalid(p.Child("port"), d.Port, "must be a TCP port (1-65535)"))
	}
	return errs
}

func validateWatched(p *field.Path, name string, w WatchedResource) field.ErrorList {
	var errs field.ErrorList
	if !resourceNamePattern.MatchString(name) {
		errs = append(errs, field.Invalid(p, name, "name must start with a letter and hold only letters, digits, '-' and '_'"))
	}
	if w.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else if strings.Count(w.APIVersion, "/") > 1 {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), w.APIVersion, "must be <version> or <group>/<version>"))
	}
	if w.Resources == "" {
		errs = append(errs, field.Required(p.Child("resources"), "the plural resource name, e.g. ingresses"))
	} else if strings.ToLower(w.Resources) != w.Resources {
		errs = append(errs, field.Invalid(p.Child("resources"), w.Resources, "must be the lower-case plural resource name"))
	}
	if w.Store != StoreFull && w.Store != StoreOnDemand {
		errs = append(errs, field.NotSupported(p.Child("store"), w.Store, []string{StoreFull, StoreOnDemand}))
	}
	if _, err := ParseLabelSelector(w.LabelSelector); err != nil {
		errs = append(errs, field.Invalid(p.Child("labelSelector"), w.LabelSelector, err.Error()))
	}
	if w.FieldSelector != "" {
		if path, _, ok := strings.Cut(w.FieldSelector, "="); !ok || path == "" || strings.ContainsAny(path, "!") {
			errs = append(errs, field.Invalid(p.Child("fieldSelector"), w.FieldSelector, "must be a JSONPath equality: path=value"))
		}
	}
	for i, ix := range w.IndexBy {
		if strings.TrimSpace(ix) == "" {
			errs = append(errs, field.Required(p.Child("indexBy").Index(i), "an index JSONPath must not be empty"))
		}
	}
	return errs
}

// ParseLabelSelector parses an equality-only label selector (k=v[,k=v]); the set-based
// and inequality forms are rejected because watches only support equality here.
func ParseLabelSelector(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if strings.Contains(part, "!=") || strings.Contains(part, "==") || strings.Contains(part, " in ") ||
			strings.Contains(part, " notin ") || strings.HasPrefix(part, "!") || !labelPairPattern.MatchString(part) {
			return nil, fmt.Errorf("%q is not supported: use equality only, k=v[,k=v]", part)
		}
		k, v, _ := strings.Cut(part, "=")
		out[k] = v
	}
	return out, nil
}

func validateFiles(p *field.Path, files map[string]GeneratedFile) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedKeys(files) {
		fp := p.Key(name)
		if !fileNamePattern.MatchString(name) {
			errs = append(errs, field.Invalid(fp, name, "must be a plain file name (letters, digits, '.', '_', '-')"))
		}
		if strings.TrimSpace(files[name].Template) == "" {
			errs = append(errs, field.Required(fp.Child("template"), ""))
		}
		errs = append(errs, validatePostProcessing(fp.Child("postProcessing"), files[name].PostProcessing)...)
	}
	return errs
}

func validatePostProcessing(p *field.Path, pps []PostProcessor) field.ErrorList {
	var errs field.ErrorList
	for i, pp := range pps {
		ip := p.Index(i)
		if pp.Type != "regex_replace" {
			errs = append(errs, field.NotSupported(ip.Child("type"), pp.Type, []string{"regex_replace"}))
			continue
		}
		if _, err := regexp.Compile(pp.Params["pattern"]); err != nil || pp.Params["pattern"] == "" {
			errs = append(errs, field.Invalid(ip.Child("params", "pattern"), pp.Params["pattern"], "must be a non-empty regular expression"))
		}
	}
	return errs
}

func validateTest(p *field.Path, t ValidationTest, s *HAProxyTemplateConfigSpec) field.ErrorList {
	var errs field.ErrorList
	for _, res := range sortedKeys(t.Fixtures) {
		if _, ok := s.WatchedResources[res]; !ok {
			errs = append(errs, field.NotFound(p.Child("fixtures").Key(res), "no watchedResources entry of that name"))
		}
	}
	for i, a := range t.Assertions {
		ap := p.Child("assertions").Index(i)
		errs = append(errs, validateAssertion(ap, a, s)...)
	}
	return errs
}

func validateAssertion(p *field.Path, a Assertion, s *HAProxyTemplateConfigSpec) field.ErrorList {
	var errs field.ErrorList
	if !targetExists(a.Target, s) {
		errs = append(errs, field.Invalid(p.Child("target"), a.Target, "must be haproxy.cfg, map:<name>, file:<name>, cert:<name> or crtlist:<name> of a declared file, or notes"))
	}
	if a.Target == TargetNotes {
		switch a.Type {
		case AssertContains, AssertNotContains, AssertEquals, AssertMatchCount, AssertMatchOrder:
		default:
			errs = append(errs, field.Invalid(p.Child("target"), a.Target, "notes are text for contains, not_contains, equals, match_count and match_order"))
		}
	}
	needPattern := func() {
		if a.Pattern == "" {
			errs = append(errs, field.Required(p.Child("pattern"), "a regular expression"))
		} else if _, err := regexp.Compile(a.Pattern); err != nil {
			errs = append(errs, field.Invalid(p.Child("pattern"), a.Pattern, err.Error()))
		}
	}
	switch a.Type {
	case AssertHAProxyValid, AssertDeterministic:
	case AssertContains, AssertNotContains:
		needPattern()
	case AssertRenderError:
		if a.Pattern != "" {
			needPattern()
		}
	case AssertMatchCount:
		needPattern()
		if _, err := fmt.Sscanf(a.Expected, "%d", new(int)); err != nil {
			errs = append(errs, field.Invalid(p.Child("expected"), a.Expected, "must be the expected number of matches"))
		}
	case AssertEquals:
	case AssertJSONPath:
		if a.JSONPath == "" {
			errs = append(errs, field.Required(p.Child("jsonpath"), ""))
		}
	case AssertMatchOrder:
		if len(a.Patterns) < 2 {
			errs = append(errs, field.Required(p.Child("patterns"), "at least two regular expressions"))
		}
		for j, pat := range a.Patterns {
			if _, err := regexp.Compile(pat); err != nil {
				errs = append(errs, field.Invalid(p.Child("patterns").Index(j), pat, err.Error()))
			}
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), a.Type, []string{
			AssertHAProxyValid, AssertContains, AssertNotContains, AssertEquals, AssertJSONPath,
			AssertMatchCount, AssertMatchOrder, AssertDeterministic, AssertRenderError}))
	}
	return errs
}

func targetExists(target string, s *HAProxyTemplateConfigSpec) bool {
	kind, name, _ := strings.Cut(target, ":")
	switch kind {
	case "haproxy.cfg", TargetNotes:
		return name == ""
	case "map":
		_, ok := s.Maps[name]
		return ok
	case "file":
		_, ok := s.Files[name]
		return ok
	case "cert":
		_, ok := s.SSLCertificates[name]
		return ok
	case "crtlist":
		_, ok := s.CrtLists[name]
		return ok
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
