package v1alpha1

import "time"

// Defaults of the spec; the CRD carries the same values as OpenAPI defaults.
const (
	DefaultAgentPort                 = 5555
	DefaultMinDeploymentInterval     = 2 * time.Second
	DefaultDriftPreventionInterval   = 60 * time.Second
	DefaultConfigPublishInterval     = 10 * time.Second
	DefaultReloadVerificationTimeout = 60 * time.Second
	MaxReloadVerificationTimeout     = 60 * time.Second
	DefaultSyncTimeout               = 2 * time.Minute
	DefaultDebounceInterval          = 100 * time.Millisecond
	DefaultSnippetPriority           = 100
	DefaultConfigFile                = "/etc/haproxy/haproxy.cfg"
	DefaultMapsDir                   = "/etc/haproxy/maps"
	DefaultSSLCertsDir               = "/etc/haproxy/ssl"
	DefaultGeneralStorageDir         = "/etc/haproxy/general"
	// DefaultCompressionThreshold keeps a published HAProxyCfg well under the API
	// server's 1.5 MiB object limit: above it, published content is compressed.
	DefaultCompressionThreshold = 512 << 10
)

// DefaultIgnoreFields are stripped from watched objects unless the spec names others.
var DefaultIgnoreFields = []string{
	"metadata.managedFields",
	`metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]`,
}

// Default fills every unset field with its default. It never overwrites a set value.
func (c *HAProxyTemplateConfig) Default() {
	s := &c.Spec
	d := &s.Dataplane
	setIfEmpty(&d.MinDeploymentInterval, DefaultMinDeploymentInterval.String())
	setIfEmpty(&d.DriftPreventionInterval, DefaultDriftPreventionInterval.String())
	setIfEmpty(&d.ConfigPublishInterval, DefaultConfigPublishInterval.String())
	setIfEmpty(&d.ReloadVerificationTimeout, DefaultReloadVerificationTimeout.String())
	setIfEmpty(&d.SyncTimeout, DefaultSyncTimeout.String())
	setIfEmpty(&d.ConfigFile, DefaultConfigFile)
	setIfEmpty(&d.MapsDir, DefaultMapsDir)
	setIfEmpty(&d.SSLCertsDir, DefaultSSLCertsDir)
	setIfEmpty(&d.GeneralStorageDir, DefaultGeneralStorageDir)
	if d.Port == 0 {
		d.Port = DefaultAgentPort
	}
	setIfEmpty(&s.TemplatingSettings.ResourceAccess, AccessTyped)
	setIfEmpty(&s.Logging.Level, "info")
	if s.WatchedResourcesIgnoreFields == nil {
		s.WatchedResourcesIgnoreFields = append([]string(nil), DefaultIgnoreFields...)
	}
	for name, w := range s.WatchedResources {
		setIfEmpty(&w.Store, StoreFull)
		s.WatchedResources[name] = w
	}
	for name, snip := range s.TemplateSnippets {
		if snip.Priority == nil {
			p := int32(DefaultSnippetPriority)
			snip.Priority = &p
			s.TemplateSnippets[name] = snip
		}
	}
	for name, t := range s.ValidationTests {
		for i := range t.Assertions {
			setIfEmpty(&t.Assertions[i].Target, "haproxy.cfg")
		}
		s.ValidationTests[name] = t
	}
}

func setIfEmpty(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

// DebounceDuration resolves the debounce interval: empty or invalid strings give the
// 100ms default silently (as the seed specifies), "0" disables debouncing.
func (w WatchedResource) DebounceDuration() time.Duration {
	if w.DebounceInterval == "" {
		return DefaultDebounceInterval
	}
	if w.DebounceInterval == "0" {
		return 0
	}
	d, err := time.ParseDuration(w.DebounceInterval)
	if err != nil || d < 0 {
		return DefaultDebounceInterval
	}
	return d
}

// Durations are the parsed dataplane intervals.
type Durations struct {
	MinDeployment, DriftPrevention, ConfigPublish, ReloadVerification, Sync time.Duration
}

// ParsedDurations returns the dataplane durations; call it after Validate succeeded.
func (d DataplaneSettings) ParsedDurations() Durations {
	return Durations{
		MinDeployment:      parseOr(d.MinDeploymentInterval, DefaultMinDeploymentInterval),
		DriftPrevention:    parseOr(d.DriftPreventionInterval, DefaultDriftPreventionInterval),
		ConfigPublish:      parseOr(d.ConfigPublishInterval, DefaultConfigPublishInterval),
		ReloadVerification: parseOr(d.ReloadVerificationTimeout, DefaultReloadVerificationTimeout),
		Sync:               parseOr(d.SyncTimeout, DefaultSyncTimeout),
	}
}

func parseOr(s string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s); err == nil {
		return d
	}
	return def
}
