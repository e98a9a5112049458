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
func checkChanged(kind bundle.Kind, out, prev string, hasPrev bool) error {
	if !hasPrev || (kind != bundle.KindConfig && kind != bundle.KindMap) {
		return checkOutput(kind, out)
	}
	from, to := changedLines(out, prev)
	if from >= to {
		return nil
	}
	return checkOutput(kind, out[from:to])
}

// changedLines returns the byte range of out, whole lines, that is not part of a
// common prefix or suffix of whole lines with prev.
func changedLines(out, prev string) (from, to int) {
	n := min(len(out), len(prev))
	p := 0
	for p < n && out[p] == prev[p] {
		p++
	}
	if p == len(out) && len(out) == len(prev) {
		return len(out), len(out) // equal
	}
	from = strings.LastIndexByte(out[:p], '\n') + 1 // start of the first differing line
	s := 0
	for s < len(out)-from && s < len(prev)-from && out[len(out)-1-s] == prev[len(prev)-1-s] {
		s++
	}
	to = len(out) - s
	// Lines that start after a newline inside the common suffix are lines of prev.
	if i := strings.IndexByte(out[to:], '\n'); i >= 0 {
		to += i
	} else {
		to = len(out)
	}
	return from, to
}
