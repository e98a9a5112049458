// Package metrics defines every metric the controller exports, with the names the
// documentation and dashboards use, on a dedicated Prometheus registry (plus the Go
// runtime and process collectors), and serves them at /metrics.
//
// New returns a Metrics whose fields are the individual collectors; components take
// the field they update (or the whole struct) rather than registering anything
// themselves, so the set of metric names lives in this one file tree. The event bus
// does not import this package: Metrics implements the bus's small Hooks interface
// (EventPublished, EventDropped, SubscribersChanged) structurally.
//
// Only the controller imports this package; the agent stays free of Prometheus.
package metrics
