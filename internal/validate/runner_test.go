package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

func raw(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }

func rawp(s string) *runtime.RawExtension { r := raw(s); return &r }

func svc(ns, name string, port int) runtime.RawExtension {
	return raw(fmt.Sprintf(`{"kind":"Service","metadata":{"namespace":%q,"name":%q},"spec":{"port":%d}}`, ns, name, port))
}

// fakeRender stands in for the render stage: haproxy.cfg is a valid config followed
// by one comment per fixture object; extraContext switches on failure modes.
func fakeRender(counter *atomic.Int64) RenderFunc {
	return func(_ context.Context, name string, test v1alpha1.ValidationTest) (*bundle.Bundle, map[string]any, error) {
		extra := map[string]any{}
		if test.ExtraContext != nil {
			if err := json.Unmarshal(test.ExtraContext.Raw, &extra); err != nil {
				return nil, nil, fmt.Errorf("extraContext: %w", err)
			}
		}
		if msg, ok := extra["fail"].(string); ok {
			return nil, nil, fmt.Errorf("render haproxy.cfg: line 3: fail: %s", msg)
		}
		if _, ok := extra["panic"]; ok {
			panic("template engine bug")
		}
		var sb strings.Builder
		sb.WriteString(validCfg)
		if extra["broken"] == true {
			sb.WriteString("    bogus_keyword x\n")
		}
		var resources []string
		for r := range test.Fixtures {
			resources = append(resources, r)
		}
		sort.Strings(resources)
		for _, r := range resources {
			for _, o := range test.Fixtures[r] {
				var obj struct {
					Kind     string
					Metadata struct{ Namespace, Name string }
					Spec     struct{ Port int }
				}
				if err := json.Unmarshal(o.Raw, &obj); err != nil {
					return nil, nil, fmt.Errorf("fixture: %w", err)
				}
				fmt.Fprintf(&sb, "# %s %s %s/%s %d\n", r, obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name, obj.Spec.Port)
			}
		}
		if extra["random"] == true {
			fmt.Fprintf(&sb, "# render %d\n", counter.Add(1))
		}
		b := bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(sb.String())}, hostMap})
		return b, map[string]any{"extraContext": extra, "test": name}, nil
	}
}

func sampleTests() map[string]v1alpha1.ValidationTest {
	return map[string]v1alpha1.ValidationTest{
		GlobalTest: {
			Fixtures:     map[string][]runtime.RawExtension{"services": {svc("default", "web", 80), svc("default", "api", 8080)}},
			ExtraContext: rawp(`{"env":"prod","tier":"edge"}`),
		},
		"basic": {
			Description: "global fixtures reach every test",
			Assertions: []v1alpha1.Assertion{
				{Type: "haproxy_valid"},
				{Type: "contains", Pattern: `^# services Service default/web 80$`},
				{Type: "jsonpath", JSONPath: "{.extraContext.env}", Expected: "prod"},
				{Type: "deterministic"},
			},
		},
		"override": {
			Fixtures:     map[string][]runtime.RawExtension{"services": {svc("default", "web", 9090), svc("other", "extra", 1)}},
			ExtraContext: rawp(`{"env":"staging"}`),
			Assertions: []v1alpha1.Assertion{
				{Type: "match_order", Patterns: []string{`default/web 9090`, `default/api 8080`, `other/extra 1`}},
				{Type: "not_contains", Pattern: `default/web 80$`},
				{Type: "jsonpath", JSONPath: "{.extraContext.env}", Expected: "staging"},
				{Type: "jsonpath", JSONPath: "{.extraContext.tier}", Expected: "edge", Description: "global keys not overridden stay"},
			},
		},
		"invalid-annotation": {
			Description:  "an invalid annotation value is rejected",
			ExtraContext: rawp(`{"fail":"annotation haproxy.org/timeout: invalid value \"abc\""}`),
			Assertions:   []v1alpha1.Assertion{{Type: "render_error", Pattern: `haproxy\.org/timeout: invalid value`}},
		},
		"render-fails": {
			ExtraContext: rawp(`{"fail":"unexpected"}`),
			Assertions: []v1alpha1.Assertion{
				{Type: "render_error"},
				{Type: "contains", Pattern: "backend"},
			},
		},
		"expects-error": {
			Assertions: []v1alpha1.Assertion{{Type: "render_error", Pattern: "invalid"}},
		},
		"nondeterministic": {
			ExtraContext: rawp(`{"random":true}`),
			Assertions:   []v1alpha1.Assertion{{Type: "deterministic"}},
		},
		"broken-config": {
			ExtraContext: rawp(`{"broken":true}`),
			Assertions:   []v1alpha1.Assertion{{Type: "haproxy_valid"}, {Type: "contains", Pattern: "^frontend fe$"}},
		},
		"content-mismatch": {
			Assertions: []v1alpha1.Assertion{
				{Type: "contains", Pattern: `^backend be_web$`},
				{Type: "equals", Target: "map:host.map", Expected: "example.com be_web\n"},
				{Type: "match_count", Pattern: `^# services `, Expected: "3"},
				{Type: "contains", Target: "map:missing.map", Pattern: "x"},
			},
		},
		"no-assertions": {},
	}
}

func TestRunReport(t *testing.T) {
	requireHAProxy(t)
	var counter atomic.Int64
	rep, err := Run(context.Background(), sampleTests(), fakeRender(&counter), Options{Checker: &Checker{}, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"basic": true, "override": true, "invalid-annotation": true, "no-assertions": true,
		"render-fails": false, "expects-error": false, "nondeterministic": false, "broken-config": false, "content-mismatch": false,
	}
	var names []string
	for _, tr := range rep.Tests {
		names = append(names, tr.Name)
		if w, ok := want[tr.Name]; !ok || w != tr.Passed {
			t.Errorf("%s: passed=%v, want %v; %+v", tr.Name, tr.Passed, w, tr)
		}
		if tr.Duration <= 0 {
			t.Errorf("%s: no duration", tr.Name)
		}
	}
	if !sort.StringsAreSorted(names) || len(names) != len(want) {
		t.Errorf("tests not sorted or _global run: %v", names)
	}
	if rep.Passed != 4 || rep.Failed != 5 {
		t.Errorf("passed %d failed %d, want 4 and 5", rep.Passed, rep.Failed)
	}

	stable := rep.WithoutDurations()
	for _, verbose := range []bool{false, true} {
		var buf bytes.Buffer
		if err := stable.WriteSummary(&buf, verbose); err != nil {
			t.Fatal(err)
		}
		name := "summary.golden"
		if verbose {
			name = "summary_verbose.golden"
		}
		assertGolden(t, name, buf.String())
	}
	js, err := stable.JSON()
	if err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "report.json.golden", string(js))
	ys, err := stable.YAML()
	if err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "report.yaml.golden", string(ys))
}

func TestSummaryFormat(t *testing.T) {
	rep := &Report{
		Tests: []TestResult{
			{Name: "a", Passed: true, Duration: 12 * time.Millisecond},
			{Name: "b", Duration: 1500 * time.Microsecond, Assertions: []Result{
				{Assertion: "haproxy.cfg contains /x/", Message: "pattern /x/ not found\n  line two"},
				{Assertion: "ok one", Passed: true},
			}},
		},
		Passed: 1, Failed: 1,
	}
	var buf bytes.Buffer
	if err := rep.WriteSummary(&buf, false); err != nil {
		t.Fatal(err)
	}
	want := "✓ a (12ms)\n✗ b (2ms)\n    ✗ haproxy.cfg contains /x/\n        pattern /x/ not found\n          line two\n1 passed, 1 failed\n"
	if buf.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", buf.String(), want)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"duration":"12ms"`) {
		t.Errorf("JSON durations not strings: %s", js)
	}
	var back map[string]any
	if err := yaml.Unmarshal(must(rep.YAML()), &back); err != nil || back["failed"] != float64(1) {
		t.Errorf("YAML round trip: %v %v", back, err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestRunParallelWorkers(t *testing.T) {
	tests := map[string]v1alpha1.ValidationTest{}
	for i := range 8 {
		tests[fmt.Sprintf("t%d", i)] = v1alpha1.ValidationTest{Assertions: []v1alpha1.Assertion{{Type: "contains", Pattern: "global"}}}
	}
	for _, workers := range []int{1, 4} {
		var mu sync.Mutex
		inflight, peak := 0, 0
		render := func(ctx context.Context, name string, test v1alpha1.ValidationTest) (*bundle.Bundle, map[string]any, error) {
			mu.Lock()
			inflight++
			peak = max(peak, inflight)
			mu.Unlock()
			time.Sleep(30 * time.Millisecond)
			mu.Lock()
			inflight--
			mu.Unlock()
			return sampleBundle(), nil, nil
		}
		rep, err := Run(context.Background(), tests, render, Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Passed != 8 {
			t.Errorf("workers=%d: %d passed, want 8", workers, rep.Passed)
		}
		if workers == 1 && peak != 1 {
			t.Errorf("workers=1: %d renders ran at once", peak)
		}
		if workers == 4 && (peak < 2 || peak > 4) {
			t.Errorf("workers=4: peak concurrency %d, want 2..4", peak)
		}
	}
}

func TestRunFilter(t *testing.T) {
	var seen sync.Map
	render := func(ctx context.Context, name string, test v1alpha1.ValidationTest) (*bundle.Bundle, map[string]any, error) {
		seen.Store(name, true)
		return sampleBundle(), nil, nil
	}
	tests := map[string]v1alpha1.ValidationTest{GlobalTest: {}, "a": {}, "b": {}, "c": {}}
	rep, err := Run(context.Background(), tests, render, Options{Tests: []string{"c", "a", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tests) != 2 || rep.Tests[0].Name != "a" || rep.Tests[1].Name != "c" {
		t.Errorf("filtered run: %+v", rep.Tests)
	}
	if _, ok := seen.Load("b"); ok {
		t.Error("filtered-out test b was rendered")
	}
	for _, bad := range []string{"nope", GlobalTest} {
		_, err := Run(context.Background(), tests, render, Options{Tests: []string{bad}})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("unknown validation test %q (available: a, b, c)", bad)) {
			t.Errorf("filter %q: got %v", bad, err)
		}
	}
}

func TestRunCheckerErrors(t *testing.T) {
	tests := map[string]v1alpha1.ValidationTest{"a": {Assertions: []v1alpha1.Assertion{{Type: "haproxy_valid"}}}}
	render := fakeRender(new(atomic.Int64))
	_, err := Run(context.Background(), tests, render, Options{Checker: &Checker{Binary: "/nonexistent/haproxy"}})
	if !errors.Is(err, ErrBinaryNotFound) {
		t.Errorf("missing binary: want ErrBinaryNotFound, got %v", err)
	}
	if _, err := Run(context.Background(), tests, render, Options{}); err == nil || !strings.Contains(err.Error(), "need an HAProxy checker") {
		t.Errorf("no checker: got %v", err)
	}
}

func TestRunRenderPanicAndCancel(t *testing.T) {
	tests := map[string]v1alpha1.ValidationTest{
		"panics": {ExtraContext: rawp(`{"panic":true}`)},
	}
	rep, err := Run(context.Background(), tests, fakeRender(new(atomic.Int64)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr := rep.Tests[0]; tr.Passed || !strings.Contains(tr.RenderError, "panic: template engine bug") {
		t.Errorf("panic not reported as render error: %+v", tr)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err = Run(ctx, map[string]v1alpha1.ValidationTest{"a": {}}, fakeRender(new(atomic.Int64)), Options{})
	if !errors.Is(err, context.Canceled) || rep == nil || rep.Failed != 1 {
		t.Errorf("cancelled run: rep=%+v err=%v", rep, err)
	}
}

func TestMergeGlobal(t *testing.T) {
	global := v1alpha1.ValidationTest{
		Fixtures: map[string][]runtime.RawExtension{
			"services":  {svc("default", "web", 80), svc("default", "api", 8080), raw(`not json`)},
			"ingresses": {raw(`{"kind":"Ingress","metadata":{"namespace":"default","name":"web"}}`)},
		},
		ExtraContext: rawp(`{"a":1,"b":{"x":1}}`),
		Assertions:   []v1alpha1.Assertion{{Type: "contains", Pattern: "global-only"}},
	}
	test := v1alpha1.ValidationTest{
		Description: "d",
		Fixtures: map[string][]runtime.RawExtension{
			"services":  {svc("other", "web", 1), svc("default", "web", 9090)},
			"endpoints": {raw(`{"kind":"EndpointSlice","metadata":{"name":"e"}}`)},
		},
		ExtraContext: rawp(`{"b":{"y":2},"c":3}`),
		Assertions:   []v1alpha1.Assertion{{Type: "contains", Pattern: "own"}},
	}
	before := string(test.Fixtures["services"][1].Raw)
	got := MergeGlobal(global, test)

	var svcs []string
	for _, o := range got.Fixtures["services"] {
		svcs = append(svcs, string(o.Raw))
	}
	wantSvcs := []string{string(svc("default", "web", 9090).Raw), string(svc("default", "api", 8080).Raw), "not json", string(svc("other", "web", 1).Raw)}
	if strings.Join(svcs, "\n") != strings.Join(wantSvcs, "\n") {
		t.Errorf("services:\n%s\nwant:\n%s", strings.Join(svcs, "\n"), strings.Join(wantSvcs, "\n"))
	}
	if len(got.Fixtures["ingresses"]) != 1 || len(got.Fixtures["endpoints"]) != 1 {
		t.Errorf("resources not carried over: %v", got.Fixtures)
	}
	if string(got.ExtraContext.Raw) != `{"a":1,"b":{"y":2},"c":3}` {
		t.Errorf("extraContext %s", got.ExtraContext.Raw)
	}
	if got.Description != "d" || len(got.Assertions) != 1 || got.Assertions[0].Pattern != "own" {
		t.Errorf("test's own fields changed: %+v", got)
	}
	// Inputs untouched.
	if len(global.Fixtures["services"]) != 3 || string(test.Fixtures["services"][1].Raw) != before || len(test.Fixtures) != 2 {
		t.Error("MergeGlobal modified its inputs")
	}
	got.Fixtures["services"][0].Raw[0] = 'X'
	if global.Fixtures["services"][0].Raw[0] == 'X' || test.Fixtures["services"][1].Raw[0] == 'X' {
		t.Error("merged test shares fixture bytes with its inputs")
	}

	if m := MergeGlobal(v1alpha1.ValidationTest{}, test); string(m.ExtraContext.Raw) != string(test.ExtraContext.Raw) || len(m.Fixtures["services"]) != 2 {
		t.Errorf("empty global: %+v", m)
	}
	if m := MergeGlobal(global, v1alpha1.ValidationTest{}); string(m.ExtraContext.Raw) != string(global.ExtraContext.Raw) || len(m.Fixtures["services"]) != 3 {
		t.Errorf("empty test: %+v", m)
	}
}
