// Package config loads HAProxyTemplateConfig files the way the CLI reads them: several
// files (or multi-document YAML such as `helm template` output) merged in order with
// later values winning, decoded strictly, defaulted and validated, with every problem
// reported by its field path.
package config
