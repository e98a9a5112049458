// Package publish tests the HAProxyCfg publisher (internal/publish) against a real
// kube-apiserver (the local cluster): the object appears with the bundle's
// checksum, certificate content never reaches the API, a 5,000-backend config fits,
// and an unchanged status is not rewritten.
package publish
