// Package resilience is the fault suite of issue #15 on the local cluster
// (localcluster/): real API server, HAProxy pods run by the process node, and
// `haptic run` replicas started as processes inside the cluster's network
// namespace so that they can be SIGKILLed. Every case runs bounded keep-alive and
// new-connection load loops (sent from inside the namespace) and reports requests,
// failures, convergence time and reloads in a table printed after the tests.
//
// `go test ./test/resilience` runs the reduced form (controller kills for 30 s);
// `make test` runs case 3 alone. `make test-resilience` sets HAPTIC_RESILIENCE=full:
// the windows (controller kills every 10 s for 2 minutes).
package resilience
