package plan

import (
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

func TestSameConfig(t *testing.T) {
	const cfg = "frontend f\n    bind :80\n    # HTTPRoute default/r1: backend default/x port 80 is not resolved\n    use_backend b\n"
	for name, tc := range map[string]struct {
		other string
		same  bool
	}{
		"identical":         {cfg, true},
		"comment changed":   {"frontend f\n    bind :80\n    # HTTPRoute default/r2: backend default/y port 80 is not resolved\n    use_backend b\n", true},
		"comment removed":   {"frontend f\n    bind :80\n\n    use_backend b\n", true},
		"layout":            {"frontend   f\n bind  :80\n use_backend b # trailing\n", true},
		"directive changed": {"frontend f\n    bind :81\n    use_backend b\n", false},
		"directive added":   {cfg + "    http-request deny\n", false},
		"does not parse":    {"frontend f\n    bind ':80\n", false},
		"comment word kept": {"frontend f\n    bind :80 #\n    use_backend b\n", true},
		"hash in a word":    {"frontend f\n    bind :80\n    use_backend '#b'\n", false},
	} {
		if got := SameConfig(bundle.TextOf(cfg), bundle.TextOf(tc.other)); got != tc.same {
			t.Errorf("%s: SameConfig = %v, want %v", name, got, tc.same)
		}
	}
}
