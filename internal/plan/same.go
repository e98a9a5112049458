package plan

import "github.com/haproxy-haptic/haptic/internal/haproxy/config"

// SameConfig reports whether two haproxy.cfg texts mean the same to HAProxy: the
// same sections and directives once comments, blank lines and layout are set aside
// (config.Config.String), which is when Plan finds nothing to do in haproxy.cfg. A
// text that does not parse is the same only as itself.
func SameConfig(a, b string) bool {
	if a == b {
		return true
	}
	ca, errA := config.Parse(a)
	cb, errB := config.Parse(b)
	return errA == nil && errB == nil && ca.String() == cb.String()
}
