// Package controller wires the stages of `haptic run`. Nothing here decides anything;
// it connects, in data-path order:
//
//	config source  HAProxyTemplateConfig from the API server → compiled templates
//	               (an invalid config keeps the previous one running; status says why)
//	watch          informers per watched resource → live store → debounced events
//	reconcile      snapshot → render → validate (haproxy -c) → desired bundle
//	discover       HAProxy pods (podSelector, controller namespace) → deploy targets
//	deploy         desired bundle → every pod's agent (paced, latest wins)
//	status         HAProxyTemplateConfig status and Kubernetes Events
//	route status   Gateway API and Ingress status (internal/status/writer): addresses
//	               from discover, Programmed from deploy outcomes (gatewaystatus.go)
//
// A change of the config starts a new iteration: templates recompiled, watchers
// rebuilt. The event bus connects watch to reconcile; a dropped critical event makes
// the reconciler start over from the stores, which are authoritative.
package controller
