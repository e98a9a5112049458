// Package provision makes the Kubernetes resources a Gateway with pods of its own
// needs (spec.gateways.provisioning: PerGateway): a Deployment in the controller's
// namespace — a relabelled copy of spec.gateways.deploymentName's, so that the
// podSelector never matches its pods — carrying the Gateway's spec.infrastructure
// labels and annotations; a Service of the Gateway's name in the Gateway's
// namespace, owned by the Gateway; and that Service's EndpointSlice, listing the
// Gateway's pods (which live in another namespace, so no selector can).
//
// It decides nothing about fleets: the controller says which Gateways exist and
// which pods a Gateway's fleet found; this package makes the API objects match and
// removes those of Gateways that are gone. A Service that exists under the name but
// is not the Gateway's is never touched.
package provision
