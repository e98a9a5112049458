package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

type validateFlags struct {
	files           []string
	tests           []string
	output          string
	haproxyBinary   string
	verbose         bool
	dumpRendered    bool
	traceTemplates  bool
	profileIncludes bool
	schemaDir       string
	workers         int
}

func newValidateCommand(stdout, stderr io.Writer) *cobra.Command {
	var f validateFlags
	cmd := &cobra.Command{
		Use:   "validate -f FILE [-f FILE...]",
		Short: "Run a config's validation tests against real HAProxy",
		Long: `Loads one or more HAProxyTemplateConfig files (merged in order, later values win;
a file's validation tests in <lib>.tests.yaml beside <lib>.yaml follow it),
renders every validation test's fixtures and checks the assertions, including
'haproxy -c' for haproxy_valid.

Exit codes: 0 all tests passed, 1 a test failed, 2 usage or config error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runValidate(cmd.Context(), f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "file", "f", nil, "HAProxyTemplateConfig YAML (repeatable; merged in order)")
	fl.StringArrayVar(&f.tests, "test", nil, "run only this validation test (repeatable)")
	fl.StringVarP(&f.output, "output", "o", "summary", "output format: summary, json or yaml")
	fl.StringVar(&f.haproxyBinary, "haproxy-binary", "haproxy", "HAProxy binary used for haproxy_valid")
	fl.BoolVar(&f.verbose, "verbose", false, "show every assertion and debug logs")
	fl.BoolVar(&f.dumpRendered, "dump-rendered", false, "print every rendered file of every test")
	fl.BoolVar(&f.traceTemplates, "trace-templates", false, "print per-template render timing")
	fl.BoolVar(&f.profileIncludes, "profile-includes", false, "print the nested include call tree")
	fl.StringVar(&f.schemaDir, "schema-dir", schemaDirDefault(), "extra OpenAPI v3 schemas or CRDs for typed access ($HAPTIC_SCHEMA_DIR)")
	fl.IntVar(&f.workers, "workers", 0, "tests run in parallel (0: number of CPUs)")
	return cmd
}

func runValidate(ctx context.Context, f validateFlags, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	switch f.output {
	case "summary", "json", "yaml":
	default:
		return usageError(fmt.Errorf("-o %q: want summary, json or yaml", f.output))
	}
	log := newLogger(stderr, f.verbose)
	p, err := loadPipeline(f.files, pipeline.Options{SchemaDir: f.schemaDir, ProfileIncludes: f.profileIncludes})
	if err != nil {
		return err
	}
	log.Debug("config loaded", "files", f.files, "tests", len(p.Config.Spec.ValidationTests))
	if issues := p.Engine.Lint(); len(issues) > 0 {
		for _, l := range issues {
			fmt.Fprintln(stderr, "lint:", l)
		}
		return &exitError{code: exitTestsFailed, err: fmt.Errorf("%d template lines print object text without a writer", len(issues)), reported: true}
	}

	var mu sync.Mutex
	rendered := map[string]*render.Result{}
	observe := func(test string, res *render.Result) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := rendered[test]; !ok { // deterministic assertions re-render; keep the first
			rendered[test] = res
		}
	}
	checker := &validate.Checker{Binary: f.haproxyBinary, Layout: p.Layout}
	rep, err := validate.Run(ctx, p.Config.Spec.ValidationTests, p.RenderFunc(observe), validate.Options{
		Workers: f.workers, Tests: f.tests, Checker: checker,
	})
	if err != nil {
		return usageError(err)
	}
	writeTraces(stdout, rendered, f)
	switch f.output {
	case "json":
		data, err := rep.JSON()
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(data))
	case "yaml":
		data, err := rep.YAML()
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, string(data))
	default:
		if err := rep.WriteSummary(stdout, f.verbose); err != nil {
			return err
		}
	}
	if rep.Failed > 0 {
		return &exitError{code: exitTestsFailed, err: fmt.Errorf("%d validation tests failed", rep.Failed), reported: true}
	}
	return nil
}

// writeTraces prints what --dump-rendered, --trace-templates and --profile-includes ask
// for, test by test in name order.
func writeTraces(w io.Writer, rendered map[string]*render.Result, f validateFlags) {
	if !f.dumpRendered && !f.traceTemplates && !f.profileIncludes {
		return
	}
	names := make([]string, 0, len(rendered))
	for n := range rendered {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		res := rendered[n]
		if f.traceTemplates {
			fmt.Fprintf(w, "=== trace %s\n", n)
			for _, t := range res.Timings {
				fmt.Fprintf(w, "  %-40s %s\n", t.Target, formatDuration(t.Duration))
			}
		}
		if f.profileIncludes && res.Profile != nil {
			fmt.Fprintf(w, "=== include profile %s\n", n)
			trees := append([]*render.Call(nil), res.Profile.Trees...)
			sort.Slice(trees, func(i, j int) bool { return trees[i].Name < trees[j].Name })
			for _, tree := range trees {
				writeCallTree(w, tree, 1)
			}
		}
		if f.dumpRendered {
			for _, file := range res.Bundle.Files {
				fmt.Fprintf(w, "=== %s: %s\n%s", n, file.Target(), file.Content.String())
				if !strings.HasSuffix(file.Content.String(), "\n") {
					fmt.Fprintln(w)
				}
			}
		}
	}
}

func writeCallTree(w io.Writer, c *render.Call, depth int) {
	fmt.Fprintf(w, "%s%s %s\n", strings.Repeat("  ", depth), c.Name, formatDuration(c.Duration))
	for _, ch := range c.Calls {
		writeCallTree(w, ch, depth+1)
	}
}
