// Package fieldpath evaluates the small JSONPath dialect that watched-resource settings
// use (indexBy, fieldSelector, watchedResourcesIgnoreFields): dotted field names,
// quoted keys in brackets and list indexes, with an optional leading `$.` or `.` —
// e.g. `metadata.labels['kubernetes.io/service-name']` or `spec.rules[0].host`.
// It works on decoded JSON (map[string]any, []any) and imports nothing else.
package fieldpath
