// Package e2e holds end-to-end tests on the local cluster with real parts: the
// controller (run in the test process, reaching the cluster from inside its network
// namespace), haptic-agent and HAProxy pods and echo-basic backends as processes on the
// process node, real HTTP through HAProxy.
package e2e
