// Package validate checks rendered bundles: it runs `haproxy -c` on a bundle laid out
// in a temporary directory at the paths the configuration references (Checker), and
// runs an HAProxyTemplateConfig's validation tests (Run).
//
// The package does not render: the render stage is passed in as a RenderFunc, so the
// runner and the assertions are testable with hand-built bundles and validate never
// depends on the template engine or on client-go.
//
// Checker writes every file of the bundle under a fresh temporary root (production
// paths inside files are rewritten by bundle.Relocate), runs `haproxy -c -f`, and maps
// the temporary paths in HAProxy's messages back to production paths, adding the
// source line each ALERT names. Verdicts are cached by bundle hash. A missing binary
// is an error matching ErrBinaryNotFound. The checker itself lives in the subpackage
// haproxycheck (Checker, HAProxyError and the rest are aliases of its names), which
// depends on neither the API types nor Kubernetes packages so that the agent can use
// it; Checker.ExtraConfigs passes further files after the config (the agent's
// agent.cfg).
//
// Assertions (one pure function each; Evaluate dispatches):
//   - haproxy_valid: `haproxy -c` accepts the whole bundle.
//   - contains / not_contains: a regular expression, in multi-line mode, matches
//     (does not match) the target.
//   - equals: the target's content is exactly expected; trailing newlines aside.
//   - match_count: the pattern matches exactly expected times.
//   - match_order: each pattern's first match starts after the previous pattern's.
//   - jsonpath: a kubectl-style path ({.a.b}, a.b, [0], ['quoted.key'], [*], .*,
//     [?(@.f=="v")], [?(@.f!="v")], [?(@.f)]) evaluated against the test's template
//     context, or against the target file parsed as JSON/YAML when the target names a
//     bundle file; its string form must equal expected.
//   - deterministic: two more renders give the same bundle (or the same target file).
//   - render_error: the render failed, with a message matching pattern if set.
//
// Targets are haproxy.cfg (the default), map:<name>, file:<name>, cert:<name> and
// crtlist:<name>. A target the bundle lacks fails the assertion, naming those it has.
// The target "notes" is not a file: it is the render's notes (note() in templates),
// one line each as note.Note's String, for the text assertions.
//
// Run runs tests in parallel workers, each merged with the _global test (MergeGlobal)
// first; _global itself is not run. A failed render fails the test unless all of its
// assertions are render_error. Reports print as a human summary (WriteSummary), JSON
// or YAML.
package validate
