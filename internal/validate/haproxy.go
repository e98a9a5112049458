package validate

import (
	"context"

	"github.com/haproxy-haptic/haptic/internal/validate/haproxycheck"
)

// The `haproxy -c` checker lives in package haproxycheck, which does not depend on
// the API types (the agent uses it directly); these are its names as validate's
// callers know them.

// Checker validates bundles with `haproxy -c`; see haproxycheck.Checker.
type Checker = haproxycheck.Checker

// HAProxyError is a configuration HAProxy rejected; see haproxycheck.HAProxyError.
type HAProxyError = haproxycheck.HAProxyError

// DefaultLayout is where files live on an HAProxy pod unless the config's dataplane
// settings say otherwise (same defaults as the CRD).
var DefaultLayout = haproxycheck.DefaultLayout

// DefaultCheckTimeout bounds one `haproxy -c` when the context has no deadline.
const DefaultCheckTimeout = haproxycheck.DefaultCheckTimeout

// ErrBinaryNotFound means the HAProxy binary is not installed or not on PATH. The CLI
// maps it to exit code 2 (a usage/environment error, not a test failure).
var ErrBinaryNotFound = haproxycheck.ErrBinaryNotFound

// Version runs `<binary> -v` and returns the version, e.g. "2.6.12-1+deb12u4".
func Version(ctx context.Context, binary string) (string, error) {
	return haproxycheck.Version(ctx, binary)
}
