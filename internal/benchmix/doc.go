// Package benchmix builds the object mix the performance guide measures: per step one
// Ingress (or one HTTPRoute on a shared Gateway), one Service and two EndpointSlices.
// tools/benchfixtures writes it as validation-test fixtures for `haptic benchmark`;
// the Go benchmarks and the incremental-render tests build snapshots from it directly.
package benchmix
