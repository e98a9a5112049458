package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

type renderFlags struct {
	files     []string
	test      string
	outDir    string
	schemaDir string
	check     bool
	binary    string
}

func newRenderCommand(stdout, stderr io.Writer) *cobra.Command {
	var f renderFlags
	cmd := &cobra.Command{
		Use:   "render -f FILE --test NAME -o DIR",
		Short: "Render one validation test's fixtures into a directory, offline",
		Long: `Renders the config against one validation test's fixtures (or no objects when
--test is not given) and writes the bundle under DIR at the paths the config
uses on HAProxy pods (DIR/etc/haproxy/haproxy.cfg, DIR/etc/haproxy/maps/...).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRender(cmd.Context(), f, stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "file", "f", nil, "HAProxyTemplateConfig YAML (repeatable; merged in order)")
	fl.StringVar(&f.test, "test", "", "validation test whose fixtures to render")
	fl.StringVarP(&f.outDir, "output-dir", "o", "", "directory to write the bundle into (required)")
	fl.StringVar(&f.schemaDir, "schema-dir", schemaDirDefault(), "extra OpenAPI v3 schemas or CRDs for typed access ($HAPTIC_SCHEMA_DIR)")
	fl.BoolVar(&f.check, "check", false, "also run 'haproxy -c' on the result")
	fl.StringVar(&f.binary, "haproxy-binary", "haproxy", "HAProxy binary for --check")
	return cmd
}

func runRender(ctx context.Context, f renderFlags, stdout io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.outDir == "" {
		return usageError(fmt.Errorf("-o DIR is required"))
	}
	p, err := loadPipeline(f.files, pipeline.Options{SchemaDir: f.schemaDir})
	if err != nil {
		return err
	}
	tests := p.Config.Spec.ValidationTests
	var test v1alpha1.ValidationTest
	if f.test != "" {
		t, ok := tests[f.test]
		if !ok {
			return usageError(fmt.Errorf("no validation test named %q", f.test))
		}
		test = t
	}
	if global, ok := tests[validate.GlobalTest]; ok {
		test = validate.MergeGlobal(global, test)
	}
	fx, err := p.Fixtures(f.test, test)
	if err != nil {
		return usageError(err)
	}
	res, err := p.Render(ctx, fx)
	if err != nil {
		return &exitError{code: exitTestsFailed, err: err}
	}
	target := p.Layout.Rebase(f.outDir)
	if err := res.Bundle.Relocate(p.Layout, target).WriteTo(target); err != nil {
		return err
	}
	if f.check {
		checker := &validate.Checker{Binary: f.binary, Layout: p.Layout}
		if err := checker.Check(ctx, res.Bundle); err != nil {
			return &exitError{code: exitTestsFailed, err: err}
		}
	}
	fmt.Fprintf(stdout, "wrote %d files (bundle %s) to %s\nhaproxy.cfg: %s\n", len(res.Bundle.Files), res.Bundle.Hash[:12], f.outDir, target.ConfigFile)
	// Notes are not files: what the templates told the controller (note()) is shown here.
	for _, n := range res.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	return nil
}
