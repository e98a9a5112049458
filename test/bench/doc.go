// Package bench is the Gateway API measurement harness behind `make
// bench-gateway-api`: the probe, routechange and scale scenarios of the
// gateway-api-bench method, run against HAPTIC on the local cluster
// (localcluster) with the chart's default libraries.
//
// The pure parts live in the package proper and are unit-tested without a
// cluster: the knobs (BENCH_* environment variables), latency statistics, the
// runner summary and metadata documents, and the artifact secret scan. The
// cluster-driving runner is TestGatewayAPIBench, behind the benchgw build tag so
// that `go test ./...` never starts a benchmark:
//
//	make bench-gateway-api BENCH_PROBE_ROUTES=300
//
// docs/benchmarks.md explains the knobs, the artifacts and how to read them.
package bench
