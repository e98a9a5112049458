// Package writer keeps the status of Gateway API objects and Ingresses equal to what
// internal/status computes. It watches what the computation reads (GatewayClasses,
// Gateways, HTTPRoutes, GRPCRoutes, ReferenceGrants, Services, TLS Secrets'
// metadata, Namespaces' labels, Ingresses and IngressClasses), recomputes after a
// short debounce, and writes through the /status subresource only the statuses that
// differ semantically from the current ones (lastTransitionTime is kept for
// conditions whose status did not change). Writes run in a bounded worker pool; the
// client's rate limiter paces them.
package writer
