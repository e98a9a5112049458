package main

import (
	"errors"
	"fmt"

	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
)

// loadPipeline loads config files, each with its validation tests (<lib>.tests.yaml
// beside <lib>.yaml, config.WithTests), and compiles them; every failure is a usage
// error (exit 2) because nothing can be tested.
func loadPipeline(files []string, opts pipeline.Options) (*pipeline.Pipeline, error) {
	if len(files) == 0 {
		return nil, usageError(errors.New("at least one -f FILE is required"))
	}
	cfg, err := config.LoadFiles(config.WithTests(files...)...)
	if err != nil {
		return nil, usageError(err)
	}
	p, err := pipeline.New(cfg, opts)
	if err != nil {
		return nil, usageError(fmt.Errorf("compile templates: %w", err))
	}
	return p, nil
}
