package agent

import (
	"context"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/validate/haproxycheck"
)

// check runs `haproxy -c` on b laid out in a temporary directory, with the same file
// list HAProxy runs with (the config, then agent.cfg). A rejection is a
// *haproxycheck.HAProxyError (validate.HAProxyError is the same type), with the
// offending source lines. It is never cached: this is the last gate before a reload,
// and files the config references outside the set may have changed.
func (a *Agent) check(ctx context.Context, b *bundle.Bundle) error {
	c := haproxycheck.Checker{
		Binary:       a.opts.Binary,
		Layout:       a.opts.Layout,
		ExtraConfigs: []string{a.opts.agentConfig()},
		NoCache:      true,
	}
	ctx, cancel := context.WithTimeout(ctx, haproxycheck.DefaultCheckTimeout)
	defer cancel()
	return c.Check(ctx, b)
}
