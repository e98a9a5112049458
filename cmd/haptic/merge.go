package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/haproxy-haptic/haptic/internal/config"
)

type mergeFlags struct {
	files      []string
	name       string
	namespace  string
	keepTests  bool
	extraPairs []string
}

// newMergeCommand turns library files (and an overlay with the deployment's
// settings) into the one HAProxyTemplateConfig the controller reads.
func newMergeCommand(stdout, _ io.Writer) *cobra.Command {
	var f mergeFlags
	cmd := &cobra.Command{
		Use:   "merge -f FILE... [--name N] [--namespace NS]",
		Short: "Merge template libraries and an overlay into one HAProxyTemplateConfig",
		Long: `Merges the files in order (later values win, as validate and render do), checks
that the result is a valid config, and prints it as one resource to apply. Validation
tests are dropped unless --keep-tests (which also merges each file's <lib>.tests.yaml
beside it, as validate does): they are for haptic validate, not for the controller. --set key=value sets templatingSettings.extraContext values (strings).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMerge(f, stdout) },
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "file", "f", nil, "HAProxyTemplateConfig YAML (repeatable; merged in order)")
	fl.StringVar(&f.name, "name", "", "metadata.name of the result (default: the merged one)")
	fl.StringVar(&f.namespace, "namespace", "", "metadata.namespace of the result")
	fl.BoolVar(&f.keepTests, "keep-tests", false, "keep spec.validationTests")
	fl.StringArrayVar(&f.extraPairs, "set", nil, "extraContext key=value (repeatable)")
	return cmd
}

func runMerge(f mergeFlags, stdout io.Writer) error {
	files := f.files
	if f.keepTests {
		files = config.WithTests(files...)
	}
	merged, err := config.MergeFiles(files...)
	if err != nil {
		return usageError(err)
	}
	meta, _ := merged["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		merged["metadata"] = meta
	}
	if f.name != "" {
		meta["name"] = f.name
	}
	if f.namespace != "" {
		meta["namespace"] = f.namespace
	}
	spec, _ := merged["spec"].(map[string]any)
	if spec == nil {
		return usageError(fmt.Errorf("%s: no spec", strings.Join(f.files, "+")))
	}
	if !f.keepTests {
		delete(spec, "validationTests")
	}
	for _, kv := range f.extraPairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageError(fmt.Errorf("--set %q: want key=value", kv))
		}
		ts, _ := spec["templatingSettings"].(map[string]any)
		if ts == nil {
			ts = map[string]any{}
			spec["templatingSettings"] = ts
		}
		extra, _ := ts["extraContext"].(map[string]any)
		if extra == nil {
			extra = map[string]any{}
			ts["extraContext"] = extra
		}
		extra[k] = v
	}
	if _, err := config.Decode(strings.Join(f.files, "+"), merged); err != nil {
		return err
	}
	out, err := yaml.Marshal(merged)
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
