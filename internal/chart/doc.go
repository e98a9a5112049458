// Package chart holds the tests of the Helm chart charts/haptic: they load it with
// Helm's own loader (helm.sh/helm/v4) and render it with Helm's engine, without a
// cluster, then check the manifests — above all that the HAProxyTemplateConfig is
// the default libraries merged as `haptic merge` merges them, and that the RBAC
// grants what that config watches. Only tests import Helm; production code never
// imports this package (TestNoHelmInBinaries).
package chart
