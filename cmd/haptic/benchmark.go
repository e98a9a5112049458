package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

type benchmarkFlags struct {
	files           []string
	tests           []string
	iterations      int
	profileIncludes bool
	schemaDir       string
	rerender        bool
	cpuProfile      string
}

func newBenchmarkCommand(stdout, stderr io.Writer) *cobra.Command {
	var f benchmarkFlags
	cmd := &cobra.Command{
		Use:   "benchmark -f FILE [-f FILE...]",
		Short: "Time template compilation and rendering of validation tests",
		Long: `Compiles the config once (timed), then for each validation test renders its
fixtures once to warm up and --iterations more times, reporting per-file timings
(haproxy.cfg and each map) with min/median/max and renders per second. Every timed
pass is a full render (nothing reused from earlier renders). A file's row is its own
work: the values templates share (shared.ComputeIfAbsent, e.g. a library's index of
every route) have rows of their own ("shared:<key>"), not counted in the file that
happened to ask for them first.

With --rerender it then times incremental re-renders: for each watched resource of
the fixtures, the middle object is replaced by a new version (same content) and the
render after that one change is timed (--iterations times, alternating versions), the
first re-render apart ("first": it comes right after a render of the unchanged
fixtures, and waits for the engine to index what that render made, which it does in
the background).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchmark(cmd.Context(), f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "file", "f", nil, "HAProxyTemplateConfig YAML (repeatable; merged in order)")
	fl.StringArrayVar(&f.tests, "test", nil, "benchmark only this validation test (repeatable)")
	fl.IntVar(&f.iterations, "iterations", 2, "timed render passes per test")
	fl.BoolVar(&f.profileIncludes, "profile-includes", false, "show the 20 slowest template includes")
	fl.StringVar(&f.schemaDir, "schema-dir", schemaDirDefault(), "extra OpenAPI v3 schemas or CRDs for typed access ($HAPTIC_SCHEMA_DIR)")
	fl.BoolVar(&f.rerender, "rerender", false, "also time the render after one object of each resource changes")
	fl.StringVar(&f.cpuProfile, "cpu-profile", "", "write a pprof CPU profile of the timed renders to this file")
	return cmd
}

func runBenchmark(ctx context.Context, f benchmarkFlags, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.iterations < 1 {
		return usageError(fmt.Errorf("--iterations must be at least 1, got %d", f.iterations))
	}
	if len(f.files) == 0 {
		return usageError(fmt.Errorf("at least one -f FILE is required"))
	}
	cfg, err := config.LoadFiles(config.WithTests(f.files...)...)
	if err != nil {
		return usageError(err)
	}
	start := time.Now()
	p, err := pipeline.New(cfg, pipeline.Options{SchemaDir: f.schemaDir, ProfileIncludes: f.profileIncludes})
	if err != nil {
		return usageError(fmt.Errorf("compile templates: %w", err))
	}
	fmt.Fprintf(stdout, "compile: %s (%d templates, %d snippets)\n", formatDuration(time.Since(start)),
		len(p.Engine.Targets()), len(cfg.Spec.TemplateSnippets))
	names, err := benchmarkTests(cfg.Spec.ValidationTests, f.tests)
	if err != nil {
		return usageError(err)
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return usageError(err)
		}
		defer stop()
	}
	profile := &render.Profile{}
	for _, name := range names {
		test := cfg.Spec.ValidationTests[name]
		if global, ok := cfg.Spec.ValidationTests[validate.GlobalTest]; ok {
			test = validate.MergeGlobal(global, test)
		}
		fx, err := p.Fixtures(name, test)
		if err != nil {
			return usageError(err)
		}
		full := render.Input{Snapshot: fx.Snapshot, ExtraContext: fx.ExtraContext, Fresh: true}
		// Each test's renders start on a collected heap, not amid the collection of
		// what decoding its fixtures (a config of 60 MB at 50,000) left behind.
		runtime.GC()
		if _, err := p.RenderInput(ctx, full); err != nil { // warm-up
			return &exitError{code: exitTestsFailed, err: fmt.Errorf("test %s: %w", name, err)}
		}
		var totals []time.Duration
		perFile := map[string][]time.Duration{}
		for range f.iterations {
			t0 := time.Now()
			res, err := p.RenderInput(ctx, full)
			if err != nil {
				return &exitError{code: exitTestsFailed, err: fmt.Errorf("test %s: %w", name, err)}
			}
			totals = append(totals, time.Since(t0))
			for _, t := range res.Timings { // a file's own work; the shared values' apart
				perFile[t.Target] = append(perFile[t.Target], t.Duration-t.Shared)
			}
			for _, t := range res.Shared {
				perFile[sharedRow+t.Target] = append(perFile[sharedRow+t.Target], t.Duration)
			}
			if res.Profile != nil {
				profile.Trees = append(profile.Trees, res.Profile.Trees...)
			}
		}
		writeBenchmark(stdout, name, fx, totals, perFile)
		if f.rerender {
			if err := benchmarkRerender(ctx, stdout, p, fx, f.iterations); err != nil {
				return &exitError{code: exitTestsFailed, err: fmt.Errorf("test %s: %w", name, err)}
			}
		}
	}
	if f.profileIncludes {
		fmt.Fprintln(stdout, "slowest includes (all tests):")
		stats := profile.Stats()
		for _, s := range stats[:min(20, len(stats))] {
			fmt.Fprintf(stdout, "  %-40s calls %-6d total %-10s avg %-10s max %s\n", s.Name, s.Count,
				formatDuration(s.Total), formatDuration(s.Total/time.Duration(max(s.Count, 1))), formatDuration(s.Max))
		}
	}
	return nil
}

func benchmarkTests(tests map[string]v1alpha1.ValidationTest, filter []string) ([]string, error) {
	var names []string
	for n := range tests {
		if n != validate.GlobalTest {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(filter) == 0 {
		return names, nil
	}
	for _, n := range filter {
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("no validation test named %q (have: %v)", n, names)
		}
	}
	return filter, nil
}

// sharedRow names a shared value's row in the per-file table: the time its factory
// took, which the file that first asked for it does not count as its own.
const sharedRow = "shared:"

func writeBenchmark(w io.Writer, name string, fx *pipeline.Fixture, totals []time.Duration, perFile map[string][]time.Duration) {
	objects := 0
	for _, n := range fx.Snapshot.Names() {
		objects += fx.Snapshot.Stores[n].Len()
	}
	mn, med, mx := stats(totals)
	fmt.Fprintf(w, "test %s (%d objects, %d iterations)\n", name, objects, len(totals))
	fmt.Fprintf(w, "  %-32s min %-10s median %-10s max %-10s %.1f renders/s\n", "total", formatDuration(mn), formatDuration(med), formatDuration(mx), float64(time.Second)/float64(max(med, 1)))
	targets := make([]string, 0, len(perFile))
	for t := range perFile {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		mn, med, mx := stats(perFile[t])
		fmt.Fprintf(w, "  %-32s min %-10s median %-10s max %s\n", t, formatDuration(mn), formatDuration(med), formatDuration(mx))
	}
}

func stats(ds []time.Duration) (mn, med, mx time.Duration) {
	s := append([]time.Duration(nil), ds...)
	slices.Sort(s)
	return s[0], s[len(s)/2], s[len(s)-1]
}

func formatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
	}
}

// benchmarkRerender times the render after one object changes, per resource: the
// middle object of the store is replaced by a new version of itself, so every
// fragment that read it renders again and the rest is reused.
func benchmarkRerender(ctx context.Context, w io.Writer, p *pipeline.Pipeline, fx *pipeline.Fixture, iterations int) error {
	e, err := p.NewEngine()
	if err != nil {
		return err
	}
	for _, res := range fx.Snapshot.Names() {
		objs := fx.Snapshot.Stores[res].List()
		if len(objs) == 0 {
			continue
		}
		changed, err := p.NewVersion(fx.Snapshot, res, objs[len(objs)/2])
		if err != nil {
			return err
		}
		snaps := []*snapshot.Snapshot{fx.Snapshot, changed}
		if _, err := e.Render(ctx, render.Input{Snapshot: fx.Snapshot, ExtraContext: fx.ExtraContext}); err != nil {
			return err
		}
		// The first re-render waits for the engine to index what the render before
		// made (in the background): it is timed apart ("first").
		var took []time.Duration
		var first time.Duration
		var reuse render.Reuse
		for i := range iterations + 1 {
			t0 := time.Now()
			r, err := e.Render(ctx, render.Input{Snapshot: snaps[(i+1)%2], ExtraContext: fx.ExtraContext})
			if err != nil {
				return err
			}
			if i == 0 {
				first = time.Since(t0)
				continue
			}
			took = append(took, time.Since(t0))
			reuse = r.Reuse
		}
		mn, med, mx := stats(took)
		fmt.Fprintf(w, "  rerender %-23s min %-10s median %-10s max %-10s first %-10s (files reused %d/%d, units %d/%d)\n", res,
			formatDuration(mn), formatDuration(med), formatDuration(mx), formatDuration(first), reuse.Files,
			reuse.Files+reuse.FilesRendered, reuse.Units, reuse.Units+reuse.UnitsRendered)
	}
	return nil
}

// startCPUProfile writes a pprof CPU profile to path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close()
	}, nil
}
