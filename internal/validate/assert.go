package validate

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	v1alpha1 "github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/note"
)

// Result is the outcome of one assertion.
type Result struct {
	Test string `json:"test"`
	// Assertion is the assertion's description, or one generated from it.
	Assertion string `json:"assertion"`
	Type      string `json:"type"`
	Target    string `json:"target,omitempty"`
	Passed    bool   `json:"passed"`
	// Message says why the assertion failed (empty when it passed).
	Message string `json:"message,omitempty"`
}

// DefaultTarget is the target of content assertions that name none.
const DefaultTarget = "haproxy.cfg"

// NotesTarget is the target that holds the render's notes (note() in templates),
// one line each, as note.Note's String: "<kind> <ns>/<name> [<section>] <reason>: <message>".
const NotesTarget = v1alpha1.TargetNotes

// contextTarget is how results of jsonpath assertions on the template context show
// their target.
const contextTarget = "context"

// Env is what assertions are evaluated against.
type Env struct {
	Bundle *bundle.Bundle
	// Context is the test's template context document (jsonpath).
	Context map[string]any
	// Notes are the render's notes (target "notes").
	Notes []note.Note
	// RenderErr is the render's error (render_error); Bundle is nil when it is set.
	RenderErr error
	// Checker runs haproxy_valid.
	Checker *Checker
	// Rerender renders the same test again (deterministic).
	Rerender func(ctx context.Context) (*bundle.Bundle, error)
}

// Evaluate runs one assertion. It never returns an error: every problem, including an
// invalid assertion, is a failed Result with a message.
func Evaluate(ctx context.Context, test string, a v1alpha1.Assertion, env Env) Result {
	var r Result
	switch a.Type {
	case v1alpha1.AssertRenderError:
		r = RenderError(a, env.RenderErr)
	case v1alpha1.AssertHAProxyValid:
		r = HAProxyValid(ctx, a, env.Bundle, env.Checker)
	case v1alpha1.AssertContains:
		r = Contains(a, env)
	case v1alpha1.AssertNotContains:
		r = NotContains(a, env)
	case v1alpha1.AssertEquals:
		r = Equals(a, env)
	case v1alpha1.AssertJSONPath:
		r = JSONPath(a, env.Bundle, env.Context)
	case v1alpha1.AssertMatchCount:
		r = MatchCount(a, env)
	case v1alpha1.AssertMatchOrder:
		r = MatchOrder(a, env)
	case v1alpha1.AssertDeterministic:
		r = Deterministic(ctx, a, env.Bundle, env.Rerender)
	default:
		r = newResult(a, displayTarget(a))
		r.fail("unknown assertion type %q (want one of %s)", a.Type, strings.Join(assertionTypes, ", "))
	}
	r.Test = test
	return r
}

var assertionTypes = []string{
	v1alpha1.AssertHAProxyValid, v1alpha1.AssertContains, v1alpha1.AssertNotContains,
	v1alpha1.AssertEquals, v1alpha1.AssertJSONPath, v1alpha1.AssertMatchCount,
	v1alpha1.AssertMatchOrder, v1alpha1.AssertDeterministic, v1alpha1.AssertRenderError,
}

func newResult(a v1alpha1.Assertion, target string) Result {
	return Result{Assertion: describe(a, target), Type: a.Type, Target: target, Passed: true}
}

func (r *Result) fail(format string, args ...any) {
	r.Passed = false
	r.Message = fmt.Sprintf(format, args...)
}

// describe is the assertion's description, or a generated one naming what it checks.
func describe(a v1alpha1.Assertion, target string) string {
	if a.Description != "" {
		return a.Description
	}
	switch a.Type {
	case v1alpha1.AssertContains:
		return fmt.Sprintf("%s contains /%s/", target, a.Pattern)
	case v1alpha1.AssertNotContains:
		return fmt.Sprintf("%s does not contain /%s/", target, a.Pattern)
	case v1alpha1.AssertEquals:
		return fmt.Sprintf("%s equals expected content", target)
	case v1alpha1.AssertJSONPath:
		return fmt.Sprintf("%s %s == %q", target, a.JSONPath, a.Expected)
	case v1alpha1.AssertMatchCount:
		return fmt.Sprintf("%s matches /%s/ %s times", target, a.Pattern, a.Expected)
	case v1alpha1.AssertMatchOrder:
		return fmt.Sprintf("%s matches %d patterns in order", target, len(a.Patterns))
	case v1alpha1.AssertRenderError:
		if a.Pattern != "" {
			return fmt.Sprintf("render fails with /%s/", a.Pattern)
		}
		return "render fails"
	case v1alpha1.AssertHAProxyValid:
		return "haproxy -c accepts the bundle"
	case v1alpha1.AssertDeterministic:
		return "renders are identical"
	}
	return a.Type
}

// displayTarget is the target a result of a shows: the file content assertions
// read, the context for jsonpath, nothing for render_error.
func displayTarget(a v1alpha1.Assertion) string {
	switch a.Type {
	case v1alpha1.AssertRenderError:
		return ""
	case v1alpha1.AssertDeterministic:
		return a.Target
	case v1alpha1.AssertJSONPath:
		if a.Target == "" || a.Target == DefaultTarget {
			return contextTarget
		}
	}
	return targetOf(a)
}

func targetOf(a v1alpha1.Assertion) string {
	if a.Target == "" {
		return DefaultTarget
	}
	return a.Target
}

// content returns the target's content, or fails r naming the available targets.
func content(r *Result, env Env, target string) (string, bool) {
	if target == NotesTarget {
		var text strings.Builder
		for _, n := range env.Notes {
			text.WriteString(n.String() + "\n")
		}
		return text.String(), true
	}
	b := env.Bundle
	if b == nil {
		r.fail("no rendered bundle")
		return "", false
	}
	f, ok := b.Get(target)
	if !ok {
		names := make([]string, len(b.Files))
		for i, f := range b.Files {
			names[i] = f.Target()
		}
		r.fail("target %q not in the rendered bundle (available: %s)", target, strings.Join(names, ", "))
		return "", false
	}
	return f.Content.String(), true
}

// compile compiles a pattern in multi-line mode so ^ and $ match at line boundaries.
func compile(r *Result, pattern string) (*regexp.Regexp, bool) {
	if pattern == "" {
		r.fail("pattern is empty")
		return nil, false
	}
	re, err := regexp.Compile("(?m)" + pattern)
	if err != nil {
		r.fail("invalid pattern /%s/: %v", pattern, err)
		return nil, false
	}
	return re, true
}

// Contains passes when the pattern matches somewhere in the target.
func Contains(a v1alpha1.Assertion, env Env) Result {
	target := targetOf(a)
	r := newResult(a, target)
	re, ok := compile(&r, a.Pattern)
	if !ok {
		return r
	}
	text, ok := content(&r, env, target)
	if !ok || re.MatchString(text) {
		return r
	}
	r.fail("pattern /%s/ not found in %s\n%s", a.Pattern, target, excerpt(a.Pattern, text))
	return r
}

// NotContains passes when the pattern matches nowhere in the target.
func NotContains(a v1alpha1.Assertion, env Env) Result {
	target := targetOf(a)
	r := newResult(a, target)
	re, ok := compile(&r, a.Pattern)
	if !ok {
		return r
	}
	text, ok := content(&r, env, target)
	if !ok {
		return r
	}
	all := re.FindAllStringIndex(text, -1)
	if len(all) == 0 {
		return r
	}
	first := all[0][0]
	r.fail("pattern /%s/ found %d time(s) in %s; first at line %d: %s",
		a.Pattern, len(all), target, lineOf(text, first), quoteLine(lineAt(text, first)))
	return r
}

// Equals passes when the target's content is exactly the expected content; a
// difference in trailing newlines is tolerated.
func Equals(a v1alpha1.Assertion, env Env) Result {
	target := targetOf(a)
	r := newResult(a, target)
	text, ok := content(&r, env, target)
	if !ok {
		return r
	}
	want, got := strings.TrimRight(a.Expected, "\n"), strings.TrimRight(text, "\n")
	if want != got {
		r.fail("%s differs from expected:\n%s", target, unifiedDiff("expected", "actual", want, got))
	}
	return r
}

// MatchCount passes when the pattern matches exactly `expected` times.
func MatchCount(a v1alpha1.Assertion, env Env) Result {
	target := targetOf(a)
	r := newResult(a, target)
	want, err := strconv.Atoi(strings.TrimSpace(a.Expected))
	if err != nil || want < 0 {
		r.fail("expected must be a non-negative integer, got %q", a.Expected)
		return r
	}
	re, ok := compile(&r, a.Pattern)
	if !ok {
		return r
	}
	text, ok := content(&r, env, target)
	if !ok {
		return r
	}
	if got := len(re.FindAllStringIndex(text, -1)); got != want {
		r.fail("expected %d match(es) of /%s/ in %s, found %d", want, a.Pattern, target, got)
	}
	return r
}

// MatchOrder passes when each pattern's first match starts after the previous
// pattern's first match.
func MatchOrder(a v1alpha1.Assertion, env Env) Result {
	target := targetOf(a)
	r := newResult(a, target)
	if len(a.Patterns) == 0 {
		r.fail("patterns is empty")
		return r
	}
	res := make([]*regexp.Regexp, len(a.Patterns))
	for i, p := range a.Patterns {
		var ok bool
		if res[i], ok = compile(&r, p); !ok {
			return r
		}
	}
	text, ok := content(&r, env, target)
	if !ok {
		return r
	}
	prev := -1
	for i, re := range res {
		loc := re.FindStringIndex(text)
		if loc == nil {
			r.fail("pattern %d /%s/ not found in %s", i+1, a.Patterns[i], target)
			return r
		}
		if loc[0] <= prev {
			r.fail("pattern %d /%s/ first matches at offset %d (line %d), not after pattern %d /%s/ at offset %d (line %d)",
				i+1, a.Patterns[i], loc[0], lineOf(text, loc[0]), i, a.Patterns[i-1], prev, lineOf(text, prev))
			return r
		}
		prev = loc[0]
	}
	return r
}

// RenderError passes when the render failed and, if a pattern is set, the error
// message matches it.
func RenderError(a v1alpha1.Assertion, renderErr error) Result {
	r := newResult(a, displayTarget(a))
	if renderErr == nil {
		r.fail("render succeeded, expected it to fail")
		return r
	}
	if a.Pattern == "" {
		return r
	}
	re, ok := compile(&r, a.Pattern)
	if ok && !re.MatchString(renderErr.Error()) {
		r.fail("render error does not match /%s/: %s", a.Pattern, renderErr)
	}
	return r
}

// HAProxyValid passes when `haproxy -c` accepts the whole bundle.
func HAProxyValid(ctx context.Context, a v1alpha1.Assertion, b *bundle.Bundle, c *Checker) Result {
	r := newResult(a, DefaultTarget)
	if b == nil {
		r.fail("no rendered bundle")
		return r
	}
	if err := c.Check(ctx, b); err != nil {
		var herr *HAProxyError
		if errors.As(err, &herr) && len(herr.Alerts) > 0 {
			r.fail("%s", strings.Join(herr.Alerts, "\n"))
			return r
		}
		r.fail("%v", err)
	}
	return r
}

// Deterministic renders twice more and passes when every render gives the same
// bundle (or, with a target, the same content of that file).
func Deterministic(ctx context.Context, a v1alpha1.Assertion, b *bundle.Bundle, rerender func(context.Context) (*bundle.Bundle, error)) Result {
	r := newResult(a, displayTarget(a))
	if b == nil {
		r.fail("no rendered bundle")
		return r
	}
	if rerender == nil {
		r.fail("no render function to render again")
		return r
	}
	for i := 2; i <= 3; i++ {
		again, err := rerender(ctx)
		if err != nil {
			r.fail("render %d failed: %v", i, err)
			return r
		}
		if msg := bundleDiff(b, again, a.Target, i); msg != "" {
			r.fail("render %d differs from render 1: %s", i, msg)
			return r
		}
	}
	return r
}

// bundleDiff describes how two bundles differ ("" when they do not), limited to
// target when it is set.
func bundleDiff(a, b *bundle.Bundle, target string, n int) string {
	if target == "" && a.Hash == b.Hash {
		return ""
	}
	targets := map[string]bool{}
	for _, bb := range []*bundle.Bundle{a, b} {
		for _, f := range bb.Files {
			if target == "" || f.Target() == target {
				targets[f.Target()] = true
			}
		}
	}
	var changed []string
	var first string
	for _, f := range a.Files {
		if !targets[f.Target()] {
			continue
		}
		g, ok := b.Get(f.Target())
		switch {
		case !ok:
			changed = append(changed, f.Target()+" (missing)")
		case g.Hash != f.Hash:
			changed = append(changed, f.Target())
			if first == "" {
				first = unifiedDiff("render 1", fmt.Sprintf("render %d", n), f.Content.String(), g.Content.String())
			}
		}
	}
	for _, g := range b.Files {
		if _, ok := a.Get(g.Target()); !ok && targets[g.Target()] {
			changed = append(changed, g.Target()+" (new)")
		}
	}
	if len(changed) == 0 {
		return ""
	}
	msg := "changed " + strings.Join(changed, ", ")
	if first != "" {
		msg += "\n" + first
	}
	return msg
}
