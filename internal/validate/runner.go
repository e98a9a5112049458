package validate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	v1alpha1 "github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/note"
)

// RenderFunc renders one validation test (already merged with _global) and returns the
// bundle and the template context document that jsonpath assertions read; the
// document's "notes" key holds the render's notes (a list of note.Note as JSON
// objects), which the "notes" target reads. The runner
// calls it from several goroutines at once, and again for deterministic assertions.
type RenderFunc func(ctx context.Context, testName string, test v1alpha1.ValidationTest) (*bundle.Bundle, map[string]any, error)

// Options tune Run.
type Options struct {
	// Workers is how many tests run at once; 0 means runtime.NumCPU().
	Workers int
	// Tests restricts the run to these test names; an unknown name is an error.
	Tests []string
	// Checker runs haproxy_valid assertions; required when any selected test has one.
	Checker *Checker
}

// Report is the outcome of a run.
type Report struct {
	// Tests are sorted by name.
	Tests    []TestResult  `json:"tests"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	Duration time.Duration `json:"duration,omitempty"`
}

// TestResult is the outcome of one validation test.
type TestResult struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Passed      bool   `json:"passed"`
	// RenderError is the render's error message, if it failed.
	RenderError string        `json:"renderError,omitempty"`
	Assertions  []Result      `json:"assertions,omitempty"`
	Duration    time.Duration `json:"duration,omitempty"`
}

// Run runs the selected validation tests in parallel and reports every result. It
// returns an error only when the run itself cannot proceed: an unknown test name, a
// missing HAProxy binary (matching ErrBinaryNotFound), or a cancelled context (with
// the partial report).
func Run(ctx context.Context, tests map[string]v1alpha1.ValidationTest, render RenderFunc, opts Options) (*Report, error) {
	start := time.Now()
	names, err := selectTests(tests, opts.Tests)
	if err != nil {
		return nil, err
	}
	if needsChecker(tests, names) {
		if opts.Checker == nil {
			return nil, errors.New("validation tests: haproxy_valid assertions need an HAProxy checker")
		}
		// One clear error up front instead of a failure in every test.
		if _, err := opts.Checker.LookPath(); err != nil {
			return nil, fmt.Errorf("validation tests: %w", err)
		}
	}
	global, hasGlobal := tests[GlobalTest]

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	workers = max(1, min(workers, len(names)))

	results := make([]TestResult, len(names))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				test := tests[names[i]]
				if hasGlobal {
					test = MergeGlobal(global, test)
				}
				results[i] = runTest(ctx, names[i], tests[names[i]].Description, test, render, opts.Checker)
			}
		})
	}
	for i := range names {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	rep := &Report{Tests: results, Duration: time.Since(start)}
	for _, t := range results {
		if t.Passed {
			rep.Passed++
		} else {
			rep.Failed++
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("validation tests: %w", err)
	}
	return rep, nil
}

// selectTests returns the names to run, sorted, without _global.
func selectTests(tests map[string]v1alpha1.ValidationTest, filter []string) ([]string, error) {
	var names []string
	if len(filter) == 0 {
		for n := range tests {
			if n != GlobalTest {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		return names, nil
	}
	seen := map[string]bool{}
	for _, n := range filter {
		if _, ok := tests[n]; !ok || n == GlobalTest {
			return nil, fmt.Errorf("unknown validation test %q (available: %s)", n, strings.Join(available(tests), ", "))
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

func available(tests map[string]v1alpha1.ValidationTest) []string {
	names, _ := selectTests(tests, nil)
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

func needsChecker(tests map[string]v1alpha1.ValidationTest, names []string) bool {
	for _, n := range names {
		for _, a := range tests[n].Assertions {
			if a.Type == v1alpha1.AssertHAProxyValid {
				return true
			}
		}
	}
	return false
}

// runTest renders one test and evaluates its assertions.
func runTest(ctx context.Context, name, description string, test v1alpha1.ValidationTest, render RenderFunc, checker *Checker) TestResult {
	start := time.Now()
	tr := TestResult{Name: name, Description: description}
	if err := ctx.Err(); err != nil {
		tr.RenderError = fmt.Sprintf("not run: %v", err)
		return tr
	}
	b, doc, err := safeRender(ctx, render, name, test)
	env := Env{Context: doc, Checker: checker, Rerender: func(ctx context.Context) (*bundle.Bundle, error) {
		b, _, err := safeRender(ctx, render, name, test)
		return b, err
	}}
	if err != nil {
		env.RenderErr = err
		tr.RenderError = err.Error()
	} else {
		env.Bundle = b
		if env.Notes, err = notesOf(doc); err != nil {
			env.RenderErr = err
			tr.RenderError = err.Error()
		}
	}

	// A failed render passes only when the test expects it: every assertion is
	// render_error. Other assertions cannot be evaluated without output.
	tr.Passed = err == nil || (len(test.Assertions) > 0 && allRenderError(test.Assertions))
	for _, a := range test.Assertions {
		var r Result
		if err != nil && a.Type != v1alpha1.AssertRenderError {
			r = newResult(a, displayTarget(a))
			r.Test = name
			r.fail("not evaluated: render failed")
		} else {
			r = Evaluate(ctx, name, a, env)
		}
		tr.Passed = tr.Passed && r.Passed
		tr.Assertions = append(tr.Assertions, r)
	}
	tr.Duration = time.Since(start)
	return tr
}

func allRenderError(as []v1alpha1.Assertion) bool {
	for _, a := range as {
		if a.Type != v1alpha1.AssertRenderError {
			return false
		}
	}
	return true
}

// safeRender turns a panic in the render function into a render error, so one bad
// test cannot take down the whole run.
func safeRender(ctx context.Context, render RenderFunc, name string, test v1alpha1.ValidationTest) (b *bundle.Bundle, doc map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			b, doc, err = nil, nil, fmt.Errorf("render %s: panic: %v", name, p)
		}
	}()
	b, doc, err = render(ctx, name, test)
	if err == nil && b == nil {
		err = fmt.Errorf("render %s: no bundle", name)
	}
	return b, doc, err
}

// notesOf decodes the render's notes from the context document's "notes" key.
func notesOf(doc map[string]any) ([]note.Note, error) {
	raw, ok := doc["notes"]
	if !ok || raw == nil {
		return nil, nil
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	var out []note.Note
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	return out, nil
}
