// Package fleetscope decides which fleets a change must re-render. A fleet is a set
// of HAProxy pods that run one rendering of the config: with per-Gateway provisioning
// one per Gateway (rendered with extraContext.gateway naming it) plus the
// podSelector's, which then renders no Gateway; otherwise the podSelector's alone,
// which renders every Gateway.
//
// Diff compares the snapshot a fleet last rendered with the current one and names
// what changed: objects of Gateway-scoped kinds (Gateways, routes, ListenerSets)
// touch the Gateways they reference before and after the change (a route attached
// to a ListenerSet: the Gateway that set names); any other object
// (GatewayClasses, ReferenceGrants, Services, EndpointSlices, Secrets, Ingresses, …)
// touches every fleet, and so does a Gateway-scoped object whose Gateway cannot be
// named (a parentRef to another kind). A fleet whose Gateway no changed object
// references need not render: its inputs, as the per-Gateway contract lets a
// template read them, are what they were.
//
// The contract: rendered for one Gateway (extraContext.gateway), templates read of
// the Gateway-scoped kinds only that Gateway and the objects attached to it; rendered
// with "-" they read none. The shipped gateway library keeps it (its per-Gateway
// render skips every other Gateway and the routes attached to them only).
//
// Whatever the kind, a fleet whose last render queried none of the changed stores
// (Change.ReadBy with render.Result.StoresRead) renders the same bundle again and
// is skipped: a Gateway's own pods, whose ingress library reads no Ingress, do not
// render for an Ingress change.
//
// Pure: snapshots in, a Change out.
package fleetscope
