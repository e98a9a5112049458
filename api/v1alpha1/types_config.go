package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// HAProxyTemplateConfig tells the controller which resources to watch and how to turn
// them into HAProxy configuration.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=htc;haptic
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.validationStatus`
// +kubebuilder:printcolumn:name="Watched",type=integer,JSONPath=`.status.watchedResourceCount`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.validationMessage`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HAProxyTemplateConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HAProxyTemplateConfigSpec   `json:"spec"`
	Status HAProxyTemplateConfigStatus `json:"status,omitempty"`
}

// HAProxyTemplateConfigList is a list of HAProxyTemplateConfig.
//
// +kubebuilder:object:root=true
type HAProxyTemplateConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HAProxyTemplateConfig `json:"items"`
}

// HAProxyTemplateConfigSpec is the desired behaviour of the controller.
type HAProxyTemplateConfigSpec struct {
	// PodSelector selects the HAProxy pods, in the controller's namespace, that receive
	// the rendered configuration.
	// +optional
	PodSelector PodSelector `json:"podSelector,omitempty"`

	// CredentialsSecretRef names the Secret holding the agent API credentials
	// (keys `username` and `password`).
	// +optional
	CredentialsSecretRef *SecretReference `json:"credentialsSecretRef,omitempty"`

	// Controller holds settings of the controller process itself.
	// +optional
	Controller ControllerSettings `json:"controller,omitempty"`

	// Logging sets the controller's log level.
	// +optional
	Logging LoggingSettings `json:"logging,omitempty"`

	// Dataplane bounds how configuration is delivered to HAProxy pods.
	// +optional
	Dataplane DataplaneSettings `json:"dataplane,omitempty"`

	// Gateways chooses how Gateway API Gateways reach the data plane.
	// +optional
	Gateways GatewaySettings `json:"gateways,omitempty"`

	// TemplatingSettings holds extra values exposed to every template.
	// +optional
	TemplatingSettings TemplatingSettings `json:"templatingSettings,omitempty"`

	// WatchedResourcesIgnoreFields are JSONPaths stripped from every watched object
	// before it is stored. Defaults to managedFields and the last-applied annotation.
	// +optional
	WatchedResourcesIgnoreFields []string `json:"watchedResourcesIgnoreFields,omitempty"`

	// WatchedResources maps a name (how templates reach the resource) to what to watch.
	// +optional
	WatchedResources map[string]WatchedResource `json:"watchedResources,omitempty"`

	// TemplateSnippets are reusable templates, included by name or by name pattern.
	// +optional
	TemplateSnippets map[string]TemplateSnippet `json:"templateSnippets,omitempty"`

	// HAProxyConfig is the template of haproxy.cfg.
	HAProxyConfig MainTemplate `json:"haproxyConfig"`

	// Maps are HAProxy map files, keyed by file name.
	// +optional
	Maps map[string]GeneratedFile `json:"maps,omitempty"`

	// Files are general files (error pages, Lua, ...), keyed by file name.
	// +optional
	Files map[string]GeneratedFile `json:"files,omitempty"`

	// SSLCertificates are PEM bundles (certificate and key), keyed by file name.
	// +optional
	SSLCertificates map[string]GeneratedFile `json:"sslCertificates,omitempty"`

	// CrtLists are HAProxy crt-list files, keyed by file name.
	// +optional
	CrtLists map[string]GeneratedFile `json:"crtLists,omitempty"`

	// ValidationTests render the templates against fixtures and check the output.
	// A test named `_global` contributes its fixtures to every other test.
	// +optional
	ValidationTests map[string]ValidationTest `json:"validationTests,omitempty"`
}

// Gateway provisioning modes.
const (
	// GatewaysShared renders every Gateway into the podSelector's pods.
	GatewaysShared = "Shared"
	// GatewaysPerGateway runs HAProxy pods for each Gateway of the class: Gateways
	// are isolated (each has its own addresses), as the Gateway API expects.
	GatewaysPerGateway = "PerGateway"
)

// GatewaySettings configures the data plane of Gateway API Gateways.
type GatewaySettings struct {
	// Provisioning is Shared (the default: Gateways render into the podSelector's
	// pods, with templatingSettings.extraContext.gateway unset) or PerGateway: the
	// controller runs a copy of DeploymentName's Deployment for each Gateway of
	// its class, renders one config per Gateway (extraContext.gateway is
	// "namespace/name"; the podSelector's pods get "-", no Gateway) and publishes
	// the Gateway's pods' IPs in its status.
	// +kubebuilder:validation:Enum=Shared;PerGateway
	// +optional
	Provisioning string `json:"provisioning,omitempty"`
	// DeploymentName is the HAProxy Deployment, in the controller's namespace, that
	// per-Gateway Deployments copy (default "haproxy").
	// +optional
	DeploymentName string `json:"deploymentName,omitempty"`
	// ControllerName is the GatewayClass spec.controllerName this controller serves
	// (default haproxy-haptic.org/controller). Two installations in one cluster need
	// different names. Templates see it as extraContext.gatewayControllerName.
	// +optional
	ControllerName string `json:"controllerName,omitempty"`
	// SupportedFeatures are the Gateway API features (pkg/features names, e.g.
	// HTTPRouteQueryParamMatching) the template libraries implement; the gateway
	// library lists its own. The controller publishes them, sorted, as the
	// status.supportedFeatures of every GatewayClass it serves, where users and the
	// conformance suite read them.
	// +listType=set
	// +optional
	SupportedFeatures []string `json:"supportedFeatures,omitempty"`
}

// DefaultGatewayControllerName is the GatewayClass controllerName served by default.
const DefaultGatewayControllerName = "haproxy-haptic.org/controller"

// GatewayControllerName is the controllerName this config serves.
func (g GatewaySettings) GatewayControllerName() string {
	if g.ControllerName != "" {
		return g.ControllerName
	}
	return DefaultGatewayControllerName
}

// PodSelector selects pods by label equality.
type PodSelector struct {
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// SecretReference points at a Secret.
type SecretReference struct {
	Name string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ControllerSettings configures the controller process.
type ControllerSettings struct {
	// +optional
	LeaderElection LeaderElectionSettings `json:"leaderElection,omitempty"`
	// +optional
	ConfigPublishing ConfigPublishingSettings `json:"configPublishing,omitempty"`
}

// LeaderElectionSettings configures the Lease-based leader election.
type LeaderElectionSettings struct {
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// +optional
	LeaseName string `json:"leaseName,omitempty"`
	// +optional
	LeaseDuration string `json:"leaseDuration,omitempty"`
	// +optional
	RenewDeadline string `json:"renewDeadline,omitempty"`
	// +optional
	RetryPeriod string `json:"retryPeriod,omitempty"`
}

// ConfigPublishingSettings configures the HAProxyCfg observability resources.
type ConfigPublishingSettings struct {
	// CompressionThreshold is the content size in bytes above which published content
	// is compressed.
	// +optional
	CompressionThreshold *int64 `json:"compressionThreshold,omitempty"`
}

// LoggingSettings configures logging.
type LoggingSettings struct {
	// +kubebuilder:validation:Enum=debug;info;warn;error
	// +optional
	Level string `json:"level,omitempty"`
}

// DataplaneSettings bounds how configuration reaches the HAProxy pods. Durations are
// Go duration strings ("2s", "1m30s").
type DataplaneSettings struct {
	// Port of the agent API in each HAProxy pod.
	// +kubebuilder:default=5555
	// +optional
	Port int32 `json:"port,omitempty"`
	// MinDeploymentInterval is the shortest interval between two reloads of one pod.
	// +kubebuilder:default="2s"
	// +optional
	MinDeploymentInterval string `json:"minDeploymentInterval,omitempty"`
	// DriftPreventionInterval is how often each pod re-hashes its tree.
	// +kubebuilder:default="60s"
	// +optional
	DriftPreventionInterval string `json:"driftPreventionInterval,omitempty"`
	// ConfigPublishInterval throttles publishing of the HAProxyCfg resource.
	// +kubebuilder:default="10s"
	// +optional
	ConfigPublishInterval string `json:"configPublishInterval,omitempty"`
	// ReloadVerificationTimeout is how long the agent waits for a reload to be
	// confirmed before restoring the last known good files. At most 60s.
	// +kubebuilder:default="60s"
	// +optional
	ReloadVerificationTimeout string `json:"reloadVerificationTimeout,omitempty"`
	// SyncTimeout is how long the controller waits for one pod to answer an apply.
	// +kubebuilder:default="2m"
	// +optional
	SyncTimeout string `json:"syncTimeout,omitempty"`
	// ConfigFile is where haproxy.cfg lives in the HAProxy pod.
	// +kubebuilder:default="/etc/haproxy/haproxy.cfg"
	// +optional
	ConfigFile string `json:"configFile,omitempty"`
	// MapsDir is where map files live in the HAProxy pod.
	// +kubebuilder:default="/etc/haproxy/maps"
	// +optional
	MapsDir string `json:"mapsDir,omitempty"`
	// SSLCertsDir is where certificates and crt-lists live in the HAProxy pod.
	// +kubebuilder:default="/etc/haproxy/ssl"
	// +optional
	SSLCertsDir string `json:"sslCertsDir,omitempty"`
	// GeneralStorageDir is where general files live in the HAProxy pod.
	// +kubebuilder:default="/etc/haproxy/general"
	// +optional
	GeneralStorageDir string `json:"generalStorageDir,omitempty"`
}

// TemplatingSettings configures the template context.
type TemplatingSettings struct {
	// ExtraContext keys become top-level template variables (and `extraContext`).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	ExtraContext *runtime.RawExtension `json:"extraContext,omitempty"`
	// ResourceAccess selects how templates read watched resources: `typed`
	// (`resources.Ingresses.List()` returns values of types built from OpenAPI
	// schemas) or `untyped` (`resources["ingresses"].List()` returns maps).
	// +kubebuilder:validation:Enum=typed;untyped
	// +kubebuilder:default=typed
	// +optional
	ResourceAccess string `json:"resourceAccess,omitempty"`
}

// Store kinds of a watched resource.
const (
	StoreFull     = "full"
	StoreOnDemand = "on-demand"
)

// Resource access modes of the template context.
const (
	AccessTyped   = "typed"
	AccessUntyped = "untyped"
)

// WatchedResource says what to watch and how to index it.
type WatchedResource struct {
	// APIVersion of the resource, e.g. networking.k8s.io/v1.
	APIVersion string `json:"apiVersion"`
	// Resources is the plural resource name, e.g. ingresses.
	Resources string `json:"resources"`
	// IndexBy are JSONPaths whose values key Fetch() and GetSingle().
	// +optional
	IndexBy []string `json:"indexBy,omitempty"`
	// LabelSelector is a server-side equality selector: k=v[,k=v].
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
	// FieldSelector is a client-side JSONPath equality filter: path=value.
	// +optional
	FieldSelector string `json:"fieldSelector,omitempty"`
	// Store is `full` (objects kept in memory) or `on-demand` (fetched when read).
	// +kubebuilder:validation:Enum=full;on-demand
	// +kubebuilder:default=full
	// +optional
	Store string `json:"store,omitempty"`
	// DebounceInterval batches the changes that arrive while the controller is
	// rendering, or close together: they fire together, this long after the last
	// firing. A change while the controller is idle, a tenth of the interval after the
	// previous one, fires at once. Empty or invalid means 100ms; "0" fires on every
	// change.
	// +optional
	DebounceInterval string `json:"debounceInterval,omitempty"`
	// EnableValidationWebhook renders and validates proposed objects at admission.
	// +optional
	EnableValidationWebhook bool `json:"enableValidationWebhook,omitempty"`
	// WatchStatus says templates read .status of this resource: status changes
	// trigger renders. Default false: status is stripped before objects are stored
	// (kept when fieldSelector or indexBy read it) and an update that changes only
	// status or server-kept metadata (resourceVersion, generation, managedFields,
	// the last-applied annotation) triggers no render.
	// +optional
	WatchStatus bool `json:"watchStatus,omitempty"`
}

// TemplateSnippet is a named template that others include.
type TemplateSnippet struct {
	Template string `json:"template"`
	// Priority orders snippets included by pattern: lower first, then by name.
	// +kubebuilder:default=100
	// +optional
	Priority *int32 `json:"priority,omitempty"`
}

// MainTemplate is the haproxy.cfg template.
type MainTemplate struct {
	Template string `json:"template"`
	// +optional
	PostProcessing []PostProcessor `json:"postProcessing,omitempty"`
}

// GeneratedFile is a file rendered from a template.
type GeneratedFile struct {
	Template string `json:"template"`
	// +optional
	PostProcessing []PostProcessor `json:"postProcessing,omitempty"`
}

// PostProcessor rewrites rendered output.
type PostProcessor struct {
	// +kubebuilder:validation:Enum=regex_replace
	Type string `json:"type"`
	// +optional
	Params map[string]string `json:"params,omitempty"`
}

// ValidationTest renders the templates against fixtures and checks the output.
type ValidationTest struct {
	// +optional
	Description string `json:"description,omitempty"`
	// Fixtures maps a watched resource name to the objects it holds in this test.
	// +optional
	Fixtures map[string][]runtime.RawExtension `json:"fixtures,omitempty"`
	// ExtraContext overrides templatingSettings.extraContext keys for this test.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	ExtraContext *runtime.RawExtension `json:"extraContext,omitempty"`
	// +optional
	Assertions []Assertion `json:"assertions,omitempty"`
}

// Assertion types.
const (
	AssertHAProxyValid  = "haproxy_valid"
	AssertContains      = "contains"
	AssertNotContains   = "not_contains"
	AssertEquals        = "equals"
	AssertJSONPath      = "jsonpath"
	AssertMatchCount    = "match_count"
	AssertMatchOrder    = "match_order"
	AssertDeterministic = "deterministic"
	AssertRenderError   = "render_error"
)

// TargetNotes is the assertion target that holds the render's notes (note() in
// templates), one line each: "<kind> <namespace>/<name> [<section>] <reason>: <message>".
const TargetNotes = "notes"

// Assertion checks one property of a rendered target.
type Assertion struct {
	// +kubebuilder:validation:Enum=haproxy_valid;contains;not_contains;equals;jsonpath;match_count;match_order;deterministic;render_error
	Type string `json:"type"`
	// Target is haproxy.cfg (default), map:<name>, file:<name>, cert:<name>, crtlist:<name>,
	// or notes: the notes the templates wrote with note() (contains, not_contains,
	// equals, match_count, match_order).
	// +optional
	Target string `json:"target,omitempty"`
	// Pattern is a regular expression (contains, not_contains, match_count, render_error).
	// +optional
	Pattern string `json:"pattern,omitempty"`
	// Patterns are regular expressions that must match in this order (match_order).
	// +optional
	Patterns []string `json:"patterns,omitempty"`
	// Expected is the exact content (equals), the expected JSONPath value (jsonpath)
	// or the expected count (match_count).
	// +optional
	Expected string `json:"expected,omitempty"`
	// JSONPath is evaluated against the test's template context (jsonpath).
	// +optional
	JSONPath string `json:"jsonpath,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
}

// HAProxyTemplateConfigStatus reports what the controller made of the config.
type HAProxyTemplateConfigStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	LastValidated *metav1.Time `json:"lastValidated,omitempty"`
	// ValidationStatus is Valid or Invalid.
	// +optional
	ValidationStatus string `json:"validationStatus,omitempty"`
	// +optional
	ValidationMessage string `json:"validationMessage,omitempty"`
	// +optional
	ValidationErrors []string `json:"validationErrors,omitempty"`
	// +optional
	WatchedResourceCount int32 `json:"watchedResourceCount,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
