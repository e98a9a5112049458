// Package controller wires the stages of `haptic run`. It decides nothing the
// stages decide; it connects them, in data-path order:
//
//	config source  HAProxyTemplateConfig from the API server → compiled templates
//	               (an invalid config keeps the previous one running; status says why)
//	watch          one set of informers per config (internal/watch.Informers): the
//	               watched resources' live stores and the status writer's inputs
//	               share one informer per resource → debounced events
//	reconcile      snapshot → render → validate (haproxy -c) → desired bundle, per
//	               fleet; one bad object is left out (leftout.go)
//	discover       HAProxy pods (podSelector, controller namespace) → deploy targets
//	provision      per-Gateway Deployments, Services, EndpointSlices (internal/provision)
//	deploy         desired bundle → every pod's agent (paced, latest wins); drift
//	               watch (internal/deploy)
//	status         HAProxyTemplateConfig status and Kubernetes Events (status.go)
//	route status   Gateway API and Ingress status (internal/status/writer): addresses
//	               from discover, Programmed from deploy outcomes (gatewaystatus.go)
//
// What runs is a list of named runners (runners.go), in the style of
// controller-runtime's Runnable: metrics and admission on every replica (a replica
// that does not lead relays reviews to the leader: relay.go), route
// status and the config's iterations on the leader only. A change of the config
// starts a new iteration: templates recompiled, informers rebuilt. An iteration gets
// its dependencies explicitly (deps); its fleets (fleets.go) are a fleetSet that
// holds the provisioner, the status writer and the iteration's start/stop hooks. The
// event bus connects watch to reconcile; a dropped critical event makes the
// reconciler start over from the stores, which are authoritative.
//
// docs/design/controller-wiring.md describes the runner list and which stage owns
// what.
package controller
