package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/plan"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

type planFlags struct {
	files, toFiles []string
	from, to       string
	version        string
	schemaDir      string
	output         string
}

func newPlanCommand(stdout, stderr io.Writer) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan -f FILE --from TEST --to TEST",
		Short: "Show how a change would reach HAProxy: runtime operations or a reload, and why",
		Long: `Renders two states offline and prints the plan that would bring HAProxy from the
first to the second: the runtime operations, or the reload and the reasons for it
(section and directive). The states are validation tests' fixtures (--from, --to) of
the config in -f; --to-file renders the second state with another config (e.g. an
edited template library) so a template author can see whether a change is structural.

Exit codes: 0 the change is reload-free, 1 it needs a reload, 2 usage or config error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPlan(cmd.Context(), f, stdout) },
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "file", "f", nil, "HAProxyTemplateConfig YAML (repeatable; merged in order)")
	fl.StringArrayVar(&f.toFiles, "to-file", nil, "config for the second state (repeatable; default: the same as -f)")
	fl.StringVar(&f.from, "from", "", "validation test whose fixtures are the running state (default: no objects)")
	fl.StringVar(&f.to, "to", "", "validation test whose fixtures are the desired state (default: no objects)")
	fl.StringVar(&f.version, "haproxy-version", "2.6.12", "HAProxy version whose runtime API the plan may use")
	fl.StringVar(&f.schemaDir, "schema-dir", schemaDirDefault(), "extra OpenAPI v3 schemas or CRDs for typed access ($HAPTIC_SCHEMA_DIR)")
	fl.StringVarP(&f.output, "output", "o", "summary", "output format: summary or json")
	return cmd
}

func runPlan(ctx context.Context, f planFlags, stdout io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.output != "summary" && f.output != "json" {
		return usageError(fmt.Errorf("-o %q: want summary or json", f.output))
	}
	caps, err := plan.CapabilitiesFor(f.version)
	if err != nil {
		return usageError(err)
	}
	running, err := renderState(ctx, f.files, f.from, f.schemaDir)
	if err != nil {
		return err
	}
	toFiles := f.toFiles
	if len(toFiles) == 0 {
		toFiles = f.files
	}
	desired, err := renderState(ctx, toFiles, f.to, f.schemaDir)
	if err != nil {
		return err
	}
	res := plan.Plan(plan.Running{Bundle: running}, desired, caps)
	if f.output == "json" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(data))
	} else {
		writePlan(stdout, res, caps)
	}
	if res.Reload {
		return &exitError{code: exitTestsFailed, err: fmt.Errorf("the change needs a reload"), reported: true}
	}
	return nil
}

// renderState renders a validation test's fixtures (or no objects) with a config.
func renderState(ctx context.Context, files []string, test, schemaDir string) (*bundle.Bundle, error) {
	p, err := loadPipeline(files, pipeline.Options{SchemaDir: schemaDir})
	if err != nil {
		return nil, err
	}
	tests := p.Config.Spec.ValidationTests
	t, ok := tests[test]
	if test != "" && !ok {
		return nil, usageError(fmt.Errorf("no validation test named %q", test))
	}
	if global, ok := tests[validate.GlobalTest]; ok {
		t = validate.MergeGlobal(global, t)
	}
	fx, err := p.Fixtures(test, t)
	if err != nil {
		return nil, usageError(err)
	}
	res, err := p.Render(ctx, fx)
	if err != nil {
		return nil, usageError(fmt.Errorf("render %q: %w", test, err))
	}
	return res.Bundle, nil
}

func writePlan(w io.Writer, res plan.Result, caps plan.Capabilities) {
	switch {
	case res.Reload:
		fmt.Fprintf(w, "reload needed on HAProxy %s, because:\n", caps.Version)
		for _, r := range res.Reasons {
			if r.Directive != "" {
				fmt.Fprintf(w, "  %s: %s: %s\n", r.Section, r.Directive, r.Detail)
			} else {
				fmt.Fprintf(w, "  %s: %s\n", r.Section, r.Detail)
			}
		}
	case len(res.Ops) == 0:
		fmt.Fprintln(w, "no change reaches HAProxy")
	default:
		fmt.Fprintf(w, "reload-free on HAProxy %s: %d runtime operations\n", caps.Version, len(res.Ops))
		for _, op := range res.Ops {
			data, _ := json.Marshal(op)
			fmt.Fprintf(w, "  %s\n", data)
		}
	}
	if res.Running != nil {
		names := make([]string, 0, len(res.Running.Aliases))
		for d := range res.Running.Aliases {
			names = append(names, d)
		}
		sort.Strings(names)
		for _, d := range names {
			fmt.Fprintf(w, "  backend %s runs as spare backend %s until the next reload\n", d, res.Running.Aliases[d])
		}
	}
	for _, f := range res.Files {
		fmt.Fprintf(w, "  writes %s\n", f.Target())
	}
}
