// Package version holds build information set with -ldflags.
package version

import "runtime"

// Set at build time: -X github.com/haproxy-haptic/haptic/internal/version.Version=...
var (
	Version = "dev"
	Commit  = "unknown"
)

// String is the one-line version of a binary.
func String(binary string) string {
	return binary + " " + Version + " (commit " + Commit + ", " + runtime.Version() + ")"
}
