// Package v1alpha1 holds the haproxy-haptic.org/v1alpha1 API: the HAProxyTemplateConfig
// custom resource that tells the controller what to watch, how to render HAProxy
// configuration from templates, how to deliver it, and how to test it; and the
// HAProxyCfg resource in which the controller publishes what it rendered and what
// each HAProxy pod runs.
//
// Defaults and validation live next to the types (defaults.go, validation.go) so that
// the CLI, the controller and the admission webhook judge a config the same way.
//
// +kubebuilder:object:generate=true
// +groupName=haproxy-haptic.org
package v1alpha1
