// Command haptic is the HAPTIC controller and its command-line tools.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/haproxy-haptic/haptic/internal/version"
)

// Exit codes shared by every subcommand.
const (
	exitOK          = 0
	exitTestsFailed = 1
	exitUsage       = 2
)

// exitError carries a process exit code out of a command.
type exitError struct {
	code int
	err  error
	// reported is set when the command already printed the failure (a test report).
	reported bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI; it is the testable entry point.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !ee.reported {
			fmt.Fprintln(stderr, "Error:", ee.err)
		}
		return ee.code
	}
	// Cobra's own errors: unknown flags, commands and arguments.
	fmt.Fprintln(stderr, "Error:", err)
	return exitUsage
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "haptic",
		Short:         "HAPTIC: a template-driven HAProxy ingress and Gateway API controller",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newValidateCommand(stdout, stderr),
		newBenchmarkCommand(stdout, stderr),
		newRenderCommand(stdout, stderr),
		newRunCommand(stdout, stderr),
		newPlanCommand(stdout, stderr),
		newMergeCommand(stdout, stderr),
		&cobra.Command{
			Use:   "version",
			Short: "Print the version",
			Args:  cobra.NoArgs,
			Run:   func(*cobra.Command, []string) { fmt.Fprintln(stdout, version.String("haptic")) },
		},
	)
	return root
}

// newLogger logs to stderr; traces and reports go to stdout.
func newLogger(stderr io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

func newInfoLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func schemaDirDefault() string { return os.Getenv("HAPTIC_SCHEMA_DIR") }
