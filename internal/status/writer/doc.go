// Package writer keeps the status of Gateway API objects and Ingresses equal to what
// internal/status computes. It reads what the computation needs (GatewayClasses,
// Gateways, HTTPRoutes, GRPCRoutes, ReferenceGrants, Services' ports, TLS Secrets'
// validity, Namespaces' labels, Ingresses and IngressClasses) from the controller's
// shared informers (Register before the set starts, Use after) — or from a set of
// its own when run alone — recomputes after a short debounce (longer when passes
// get long: at most a tenth of a core goes to them), and writes through
// the /status subresource only the statuses that differ semantically from the
// current ones (lastTransitionTime is kept for conditions whose status did not
// change). Writes run in a bounded worker pool; the client's rate limiter paces
// them. Its Ledger records which Gateways each rendered bundle holds, so that a
// deploy of the bundle makes exactly those Programmed.
package writer
