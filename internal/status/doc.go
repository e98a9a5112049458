// Package status computes the status HAPTIC owes the objects it serves: Gateway API
// GatewayClasses, Gateways, HTTPRoutes and GRPCRoutes (Gateway API v1.6.3 semantics:
// listener validity and conflicts, route attachment with hostname intersection,
// sectionName/port matching, allowedRoutes namespaces and kinds, backend references
// and ReferenceGrants) and Ingress status.loadBalancer.
//
// Everything here is a pure function of its inputs: no clients, no clocks (conditions
// carry no transition time until Merge puts one in, keeping the existing one when the
// condition's status did not change), sorted output. Equal reports whether a write
// would change anything, so the writer (internal/status/writer) never rewrites a
// status that is already right.
package status
