package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

// check runs `haproxy -c` on b laid out in a temporary directory, with the same file
// list HAProxy runs with (the config, then agent.cfg). A rejection is a
// *validate.HAProxyError; its alerts come from validate.Checker, which formats them
// with the offending source lines.
func (a *Agent) check(ctx context.Context, b *bundle.Bundle) error {
	tmp, err := os.MkdirTemp("", "haptic-agent-check-")
	if err != nil {
		return fmt.Errorf("haproxy -c: temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	l := a.opts.Layout
	tl := l.Rebase(tmp)
	if err := b.Relocate(l, tl).WriteTo(tl); err != nil {
		return fmt.Errorf("haproxy -c: lay out bundle: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, validate.DefaultCheckTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.opts.Binary, "-c", "-f", tl.ConfigFile, "-f", a.opts.agentConfig())
	cmd.Dir = tmp
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("haproxy -c: %w", ctx.Err())
	}
	if runErr == nil {
		return nil
	}
	var exitErr *exec.ExitError
	if !errors.As(runErr, &exitErr) {
		return fmt.Errorf("haproxy -c: run %s: %w", a.opts.Binary, runErr)
	}
	// Rejected: let the Checker describe it (same bundle, same layout, config only).
	checker := validate.Checker{Binary: a.opts.Binary, Layout: l}
	var herr *validate.HAProxyError
	if err := checker.Check(ctx, b); errors.As(err, &herr) {
		return herr
	}
	// Only the combination with agent.cfg fails.
	output := strings.ReplaceAll(out.String(), tmp, "")
	var alerts []string
	for _, line := range strings.Split(output, "\n") {
		if strings.Contains(line, "[ALERT]") {
			alerts = append(alerts, strings.TrimSpace(line))
		}
	}
	return &validate.HAProxyError{Alerts: alerts, Output: output, ExitCode: exitErr.ExitCode()}
}
