// Package validate checks rendered bundles: it runs `haproxy -c` on a bundle laid out
// in a temporary directory at the paths the configuration references (Checker), and
// runs an HAProxyTemplateConfig's validation tests (Run) — render each test's fixtures
// through an injected RenderFunc, then evaluate its assertions (haproxy_valid,
// contains, not_contains, equals, jsonpath, match_count, match_order, deterministic,
// render_error) against the bundle, the template context or the render error.
//
// The package does not render: the render stage is passed in as a function, so the
// runner and the assertions are testable with hand-built bundles and validate never
// depends on the template engine or on client-go. Reports print as a human summary
// (WriteSummary), JSON or YAML.
package validate
