// Package resilience is the fault suite of issue #15 on the local cluster
// (localcluster/): real API server, HAProxy pods run by the process node, and
// `haptic run` replicas started as processes inside the cluster's network
// namespace so that they can be SIGKILLed. Every case runs bounded keep-alive and
// new-connection load loops (sent from inside the namespace) and reports requests,
// failures, convergence time and reloads in a table printed after the tests.
//
// Cases: 1 controller SIGKILLs (TestControllerKilled), 2 API server away for 30 s
// (TestAPIServerAway), 3 HAProxy master SIGKILL (TestHAProxyMasterKilled), 4 agent
// SIGKILL with HAProxy adopted (TestAgentRestarted), 5 HAProxy pod deleted during a
// burst (TestHAProxyPodDeletedDuringBurst), 6 200 interleaved runtime and reload
// changes (TestInterleavedChanges). Case 2 stops the cluster's API server: nothing
// else may use the cluster meanwhile.
//
// `go test ./test/resilience` runs the reduced form (controller kills for 30 s);
// `make test` runs cases 3 and 4. `make test-resilience` sets HAPTIC_RESILIENCE=full:
// the windows (controller kills every 10 s for 2 minutes).
package resilience
