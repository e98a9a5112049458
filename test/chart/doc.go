// Package chart installs the Helm chart charts/haptic into the local cluster — the
// manifests Helm's own engine renders, applied as they are, so the controller and
// HAProxy pods run what the chart says — and routes an Ingress and an HTTPRoute
// through it. It then scrapes the controller's and HAProxy's /metrics and checks
// that every metric named in the chart's PrometheusRule and Grafana dashboard exists.
//
// The chart's metric names are found by a PromQL lexer of our own (promql.go's
// metricNames): the Prometheus module is not a dependency of this repository.
package chart
