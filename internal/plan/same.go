package plan

import (
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// SameConfig reports whether two haproxy.cfg texts mean the same to HAProxy: the
// same sections and directives once comments, blank lines and layout are set aside
// (config.Config.String), which is when Plan finds nothing to do in haproxy.cfg. A
// text that does not parse is the same only as itself.
func SameConfig(a, b bundle.Text) bool {
	// The usual difference is a note (a whole comment line) that changed with an
	// object: equal without those lines is the same, without parsing either text.
	if sameWithoutCommentLines(a, b) {
		return true
	}
	ca, errA := config.Parse(a.String())
	cb, errB := config.Parse(b.String())
	return errA == nil && errB == nil && ca.String() == cb.String()
}

// sameWithoutCommentLines reports whether a and b are equal once whole comment
// lines are left out, without building either text: only the lines between those
// the two begin and end with (bundle.CommonLines, mostly remembered from the render)
// are read.
func sameWithoutCommentLines(x, y bundle.Text) bool {
	if x.Same(y) {
		return true
	}
	pre, suf := bundle.CommonLines(x, y)
	a, b := x.Slice(pre, x.Len()-suf), y.Slice(pre, y.Len()-suf)
	next := func(s string) (line, rest string, ok bool) {
		for s != "" {
			line, rest, _ = strings.Cut(s, "\n")
			if !strings.HasPrefix(strings.TrimLeft(line, " \t"), "#") {
				return line, rest, true
			}
			s = rest
		}
		return "", "", false
	}
	for {
		la, ra, okA := next(a)
		lb, rb, okB := next(b)
		if okA != okB || la != lb {
			return false
		}
		if !okA {
			return true
		}
		a, b = ra, rb
	}
}
