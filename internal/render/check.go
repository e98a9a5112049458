package render

import (
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// checkChanged is checkOutput for a re-render. haproxy.cfg and map files are checked
// line by line, each line on its own; prev, the last output of the same file, passed
// the whole check. So only the lines between the longest common prefix and suffix
// (whole lines) of out and prev are checked: a change to one object checks its own
// lines, not the file.
func checkChanged(kind bundle.Kind, out, prev bundle.Text, hasPrev bool) error {
	if !hasPrev || (kind != bundle.KindConfig && kind != bundle.KindMap) {
		return checkOutput(kind, out.String())
	}
	prefix, suffix := bundle.CommonLines(out, prev)
	if prefix >= out.Len()-suffix {
		return nil
	}
	mid, prevMid := out.Slice(prefix, out.Len()-suffix), prev.Slice(prefix, prev.Len()-suffix)
	if before, after, ok := aroundLines(mid, prevMid); ok {
		// Lines added at two places (a route's host line and its prefix lines, far
		// apart in a sorted map): only those, not the last output's lines between.
		if err := checkOutput(kind, before); err != nil {
			return err
		}
		return checkOutput(kind, after)
	}
	if _, _, ok := aroundLines(prevMid, mid); ok {
		return nil // lines taken out at two places: what is left passed before
	}
	return checkOutput(kind, mid)
}

// aroundLines finds inner, whole lines, in s starting at one of its first lines, and
// returns the lines of s before and after it.
func aroundLines(s, inner string) (before, after string, ok bool) {
	if inner == "" || len(inner) >= len(s) {
		return "", "", false
	}
	for at, tries := 0, 0; at+len(inner) <= len(s) && tries < 16; tries++ {
		if s[at:at+len(inner)] == inner && (at+len(inner) == len(s) || s[at+len(inner)-1] == '\n') {
			return s[:at], s[at+len(inner):], true
		}
		next := strings.IndexByte(s[at:], '\n')
		if next < 0 {
			break
		}
		at += next + 1
	}
	return "", "", false
}
