// Package echobin only anchors the module that builds the Gateway API
// conformance echo server (echo-basic) and pins the Gateway API release whose
// CRDs the local cluster installs (build-binaries.sh copies them from this
// module's sigs.k8s.io/gateway-api in the module cache).
package echobin
