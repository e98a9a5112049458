// Package localcluster holds the project's local Kubernetes cluster, built from
// real components on machines without Docker: the k8sbin module (etcd and the
// Kubernetes binaries, built and cached by build-binaries.sh), the
// haptic-cluster tool (cmd/haptic-cluster, packages cluster and netns), the
// process node (package node) and the test helper (package clustertest).
// The end-to-end tests in this directory prove the whole works; see README.md.
package localcluster
