package validate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	v1alpha1 "github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/note"
)

func contextDoc() map[string]any {
	return map[string]any{
		"extraContext": map[string]any{"debug": true, "name": "edge", "replicas": float64(2)},
		"items": []any{
			map[string]any{"name": "a", "port": float64(80), "kind": "Service"},
			map[string]any{"name": "b", "port": float64(443), "kind": "Ingress"},
		},
		"labels": map[string]any{"kubernetes.io/name": "web"},
	}
}

type assertCase struct {
	name    string
	a       v1alpha1.Assertion
	pass    bool
	message []string // substrings of the failure message
}

func runAssertCases(t *testing.T, cases []assertCase, env Env) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Evaluate(context.Background(), "t", tc.a, env)
			if r.Passed != tc.pass {
				t.Fatalf("passed=%v, want %v; message: %s", r.Passed, tc.pass, r.Message)
			}
			if r.Test != "t" || r.Type != tc.a.Type || r.Assertion == "" {
				t.Errorf("result not filled in: %+v", r)
			}
			if tc.pass && r.Message != "" {
				t.Errorf("passing result has a message: %s", r.Message)
			}
			for _, want := range tc.message {
				if !strings.Contains(r.Message, want) {
					t.Errorf("message lacks %q:\n%s", want, r.Message)
				}
			}
		})
	}
}

func TestContentAssertions(t *testing.T) {
	contains := func(p string) v1alpha1.Assertion { return v1alpha1.Assertion{Type: "contains", Pattern: p} }
	cases := []assertCase{
		{name: "contains", a: contains(`^backend be_app$`), pass: true},
		{name: "contains multiline anchors", a: contains(`^\s+server s1 127\.0\.0\.1:8082$`), pass: true},
		{name: "contains map target", a: v1alpha1.Assertion{Type: "contains", Target: "map:host.map", Pattern: `^example\.org be_app$`}, pass: true},
		{name: "contains fails with near lines", a: contains(`^backend be_missing$`), message: []string{
			"pattern /^backend be_missing$/ not found in haproxy.cfg", `lines containing "backend be_"`, "    15 | backend be_default"}},
		{name: "contains fails with start of file", a: contains(`zzz`), message: []string{"first 5 of 19 lines", "    1 | global"}},
		{name: "contains bad regexp", a: contains(`(`), message: []string{"invalid pattern /(/"}},
		{name: "contains empty pattern", a: contains(""), message: []string{"pattern is empty"}},
		{name: "missing target", a: v1alpha1.Assertion{Type: "contains", Target: "map:nope.map", Pattern: "x"}, message: []string{
			`target "map:nope.map" not in the rendered bundle (available: haproxy.cfg, map:host.map, file:values.yaml)`}},

		{name: "not_contains", a: v1alpha1.Assertion{Type: "not_contains", Pattern: `be_missing`}, pass: true},
		{name: "not_contains fails", a: v1alpha1.Assertion{Type: "not_contains", Pattern: `server s1`}, message: []string{
			"found 2 time(s) in haproxy.cfg; first at line 16", `"    server s1 127.0.0.1:8081"`}},

		{name: "equals", a: v1alpha1.Assertion{Type: "equals", Target: "map:host.map", Expected: "example.com be_app\nexample.org be_app\n"}, pass: true},
		{name: "equals tolerates trailing newline", a: v1alpha1.Assertion{Type: "equals", Target: "map:host.map", Expected: "example.com be_app\nexample.org be_app"}, pass: true},
		{name: "equals fails with diff", a: v1alpha1.Assertion{Type: "equals", Target: "map:host.map", Expected: "example.com be_app\nexample.net be_other\n"}, message: []string{
			"map:host.map differs from expected", "@@ line 2 @@", "     example.com be_app", "    -example.net be_other", "    +example.org be_app"}},
		{name: "equals leading whitespace matters", a: v1alpha1.Assertion{Type: "equals", Target: "map:host.map", Expected: " example.com be_app\nexample.org be_app\n"}, message: []string{"@@ line 1 @@"}},

		{name: "match_count", a: v1alpha1.Assertion{Type: "match_count", Pattern: `^backend `, Expected: "2"}, pass: true},
		{name: "match_count zero", a: v1alpha1.Assertion{Type: "match_count", Pattern: `^listen `, Expected: "0"}, pass: true},
		{name: "match_count fails", a: v1alpha1.Assertion{Type: "match_count", Pattern: `^backend `, Expected: "3"}, message: []string{
			"expected 3 match(es) of /^backend / in haproxy.cfg, found 2"}},
		{name: "match_count bad expected", a: v1alpha1.Assertion{Type: "match_count", Pattern: `x`, Expected: "two"}, message: []string{
			`expected must be a non-negative integer, got "two"`}},

		{name: "match_order", a: v1alpha1.Assertion{Type: "match_order", Patterns: []string{`^global`, `^frontend fe`, `^backend be_default`, `^backend be_app`}}, pass: true},
		{name: "match_order fails", a: v1alpha1.Assertion{Type: "match_order", Patterns: []string{`^backend be_app`, `^backend be_default`}}, message: []string{
			"pattern 2 /^backend be_default/ first matches at offset", "(line 15), not after pattern 1 /^backend be_app/ at offset", "(line 18)"}},
		{name: "match_order missing pattern", a: v1alpha1.Assertion{Type: "match_order", Patterns: []string{`^global`, `^listen`}}, message: []string{
			"pattern 2 /^listen/ not found in haproxy.cfg"}},
		{name: "match_order empty", a: v1alpha1.Assertion{Type: "match_order"}, message: []string{"patterns is empty"}},

		{name: "unknown type", a: v1alpha1.Assertion{Type: "bogus"}, message: []string{`unknown assertion type "bogus"`}},
	}
	runAssertCases(t, cases, Env{Bundle: sampleBundle()})
}

func TestJSONPathAssertions(t *testing.T) {
	jp := func(path, expected string) v1alpha1.Assertion {
		return v1alpha1.Assertion{Type: "jsonpath", JSONPath: path, Expected: expected}
	}
	cases := []assertCase{
		{name: "kubectl style", a: jp("{.extraContext.name}", "edge"), pass: true},
		{name: "plain path", a: jp("extraContext.debug", "true"), pass: true},
		{name: "number", a: jp("extraContext.replicas", "2"), pass: true},
		{name: "list index", a: jp("{.items[1].port}", "443"), pass: true},
		{name: "quoted key", a: jp(`{.labels['kubernetes.io/name']}`, "web"), pass: true},
		{name: "wildcard", a: jp("{.items[*].name}", "a b"), pass: true},
		{name: "filter", a: jp(`{.items[?(@.kind=="Ingress")].port}`, "443"), pass: true},
		{name: "filter not equal", a: jp(`{.items[?(@.kind != "Ingress")].name}`, "a"), pass: true},
		{name: "object as JSON", a: jp("{.items[0]}", `{"kind":"Service","name":"a","port":80}`), pass: true},
		{name: "file target YAML", a: v1alpha1.Assertion{Type: "jsonpath", Target: "file:values.yaml", JSONPath: "{.app.hosts[1]}", Expected: "b.example"}, pass: true},
		{name: "wrong value", a: jp("{.extraContext.name}", "core"), message: []string{`{.extraContext.name} is "edge", expected "core"`}},
		{name: "missing path names keys", a: jp("{.extraContext.nmae}", "edge"), message: []string{
			"{.extraContext.nmae} not found in context (keys at .extraContext: debug, name, replicas)"}},
		{name: "filter matches nothing", a: jp(`{.items[?(@.kind=="Gateway")].name}`, "x"), message: []string{"not found in context"}},
		{name: "bad path", a: jp("{.items[x]}", "1"), message: []string{"neither a quoted key nor a list index"}},
		{name: "empty path", a: jp("{}", "1"), message: []string{"is empty"}},
		{name: "unsupported filter operator", a: jp(`{.items[?(@.port > 80)].name}`, "b"), message: []string{"only @.field"}},
		{name: "unsupported filter conjunction", a: jp(`{.items[?(@.kind=="Ingress" && @.port==443)].name}`, "b"), message: []string{"only @.field"}},
		{name: "filter exists", a: jp(`{.items[?(@.port)].name}`, "a b"), pass: true},
		{name: "map wildcard", a: jp(`{.labels.*}`, "web"), pass: true},
		{name: "file target not YAML", a: v1alpha1.Assertion{Type: "jsonpath", Target: "haproxy.cfg", JSONPath: "a", Expected: "1"},
			message: []string{"a not found in context"}}, // haproxy.cfg means the default: the context
		{name: "file target missing", a: v1alpha1.Assertion{Type: "jsonpath", Target: "file:nope.json", JSONPath: "a", Expected: "1"},
			message: []string{`target "file:nope.json" not in the rendered bundle`}},
	}
	runAssertCases(t, cases, Env{Bundle: sampleBundle(), Context: contextDoc()})
	runAssertCases(t, []assertCase{
		{name: "empty context", a: jp("{.x}", "1"), message: []string{"{.x} not found in context (the top level is empty)"}},
	}, Env{Bundle: sampleBundle()})
}

func TestRenderErrorAssertion(t *testing.T) {
	failed := Env{RenderErr: errors.New(`template haproxy.cfg:3:5: fail: annotation haproxy.org/timeout: invalid value "abc"`)}
	runAssertCases(t, []assertCase{
		{name: "any error", a: v1alpha1.Assertion{Type: "render_error"}, pass: true},
		{name: "pattern matches", a: v1alpha1.Assertion{Type: "render_error", Pattern: `invalid value "abc"`}, pass: true},
		{name: "pattern mismatch", a: v1alpha1.Assertion{Type: "render_error", Pattern: `unknown backend`}, message: []string{
			"render error does not match /unknown backend/: template haproxy.cfg:3:5"}},
	}, failed)
	runAssertCases(t, []assertCase{
		{name: "render succeeded", a: v1alpha1.Assertion{Type: "render_error"}, message: []string{"render succeeded, expected it to fail"}},
	}, Env{Bundle: sampleBundle()})
}

func TestHAProxyValidAssertion(t *testing.T) {
	requireHAProxy(t)
	a := v1alpha1.Assertion{Type: "haproxy_valid"}
	runAssertCases(t, []assertCase{{name: "valid", a: a, pass: true}}, Env{Bundle: sampleBundle(), Checker: &Checker{}})
	broken := bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(validCfg + "    balance nonsense\n")}, hostMap})
	runAssertCases(t, []assertCase{{name: "invalid", a: a, message: []string{"[/etc/haproxy/haproxy.cfg:20]", "    20 |     balance nonsense"}}},
		Env{Bundle: broken, Checker: &Checker{}})
	runAssertCases(t, []assertCase{{name: "missing binary", a: a, message: []string{"not found: install HAProxy"}}},
		Env{Bundle: sampleBundle(), Checker: &Checker{Binary: "/nonexistent/haproxy"}})
}

func TestDeterministicAssertion(t *testing.T) {
	b := sampleBundle()
	same := func(context.Context) (*bundle.Bundle, error) { return sampleBundle(), nil }
	n := 0
	drifting := func(context.Context) (*bundle.Bundle, error) {
		n++
		return bundle.New(append(append([]bundle.File(nil), b.Files...)[:1:1],
			bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(fmt.Sprintf("example.com be_app\nexample.org be_%d\n", n))},
			b.Files[2])), nil
	}
	failing := func(context.Context) (*bundle.Bundle, error) { return nil, errors.New("boom") }
	a := v1alpha1.Assertion{Type: "deterministic"}
	runAssertCases(t, []assertCase{{name: "stable", a: a, pass: true}}, Env{Bundle: b, Rerender: same})
	runAssertCases(t, []assertCase{{name: "drifting", a: a, message: []string{
		"render 2 differs from render 1: changed map:host.map", "@@ line 2 @@", "    -example.org be_app", "    +example.org be_1"}}},
		Env{Bundle: b, Rerender: drifting})
	runAssertCases(t, []assertCase{
		{name: "drift outside target", a: v1alpha1.Assertion{Type: "deterministic", Target: "haproxy.cfg"}, pass: true},
	}, Env{Bundle: b, Rerender: drifting})
	runAssertCases(t, []assertCase{{name: "rerender fails", a: a, message: []string{"render 2 failed: boom"}}}, Env{Bundle: b, Rerender: failing})
}

func TestLongestLiteral(t *testing.T) {
	for pattern, want := range map[string]string{
		`^backend\s+be_app$`:  "backend",
		`use_backend %\[req`:  "use_backend %[req",
		`(?i)backend`:         "",
		`(`:                   "",
		`server s1 (a|b)\.io`: "server s1",
	} {
		if got := longestLiteral(pattern); got != want {
			t.Errorf("longestLiteral(%q) = %q, want %q", pattern, got, want)
		}
	}
}

func TestAssertionsWithoutBundle(t *testing.T) {
	var cases []assertCase
	for _, typ := range []string{"contains", "not_contains", "equals", "match_count", "match_order", "haproxy_valid", "deterministic"} {
		cases = append(cases, assertCase{name: typ, a: v1alpha1.Assertion{Type: typ, Pattern: "x", Patterns: []string{"x"}, Expected: "1"},
			message: []string{"no rendered bundle"}})
	}
	runAssertCases(t, cases, Env{})
}

// The notes target reads the render's notes, one line each, with every text
// assertion; it is never a bundle file.
func TestNotesTarget(t *testing.T) {
	notes := []note.Note{
		{Kind: "Gateway", Namespace: "default", Name: "young", Section: "http", Reason: "PortUnavailable", Message: "port 80 belongs to gateway default/z-old"},
		{Kind: "Gateway", Namespace: "default", Name: "young", Section: "tcp", Reason: "UnsupportedProtocol", Message: "protocol TCP is not supported"},
	}
	on := func(typ, pattern string) v1alpha1.Assertion {
		return v1alpha1.Assertion{Type: typ, Target: NotesTarget, Pattern: pattern}
	}
	cases := []assertCase{
		{name: "contains", a: on("contains", `^Gateway default/young \[http\] PortUnavailable: port 80 belongs to gateway default/z-old$`), pass: true},
		{name: "contains fails", a: on("contains", `HostnameConflict`), message: []string{"not found in notes"}},
		{name: "not_contains", a: on("not_contains", `frontend`), pass: true},
		{name: "match_count", a: v1alpha1.Assertion{Type: "match_count", Target: NotesTarget, Pattern: `^Gateway `, Expected: "2"}, pass: true},
		{name: "equals", a: v1alpha1.Assertion{Type: "equals", Target: NotesTarget, Expected: notes[0].String() + "\n" + notes[1].String()}, pass: true},
		{name: "not in haproxy.cfg", a: v1alpha1.Assertion{Type: "not_contains", Pattern: `PortUnavailable`}, pass: true},
	}
	runAssertCases(t, cases, Env{Bundle: sampleBundle(), Notes: notes})
	runAssertCases(t, []assertCase{{name: "no notes", a: v1alpha1.Assertion{Type: "equals", Target: NotesTarget, Expected: ""}, pass: true}},
		Env{Bundle: sampleBundle()})
}
