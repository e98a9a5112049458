package render

import (
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// checkChanged is checkOutput for a re-render. haproxy.cfg and map files are checked
// line by line, each line on its own; prev, the last output of the same file, passed
// the whole check. So only the lines between the longest common prefix and suffix
// (whole lines) of out and prev are checked: a change to one object checks its own
// lines, not the file.
func checkChanged(kind bundle.Kind, out, prev string, hasPrev bool) error {
	if !hasPrev || (kind != bundle.KindConfig && kind != bundle.KindMap) {
		return checkOutput(kind, out)
	}
	prefix, suffix := bundle.CommonLines(out, prev)
	if prefix >= len(out)-suffix {
		return nil
	}
	return checkOutput(kind, out[prefix:len(out)-suffix])
}
