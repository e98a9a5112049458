package render

import (
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// checkLines is checkOutput for a re-render: haproxy.cfg is checked line by line, each
// line on its own, so a line that passed in the last render of the same file passes
// again and only the other lines are checked. It returns the lines of out, all of
// which passed, for the next render.
func checkLines(kind bundle.Kind, out string, passed map[string]struct{}) (map[string]struct{}, error) {
	if kind != bundle.KindConfig {
		return nil, checkOutput(kind, out)
	}
	lines := strings.Split(out, "\n")
	now := make(map[string]struct{}, len(lines))
	var unknown []string
	for _, l := range lines {
		if _, ok := passed[l]; !ok {
			unknown = append(unknown, l)
		}
		now[l] = struct{}{}
	}
	if len(unknown) > 0 {
		if err := checkOutput(kind, strings.Join(unknown, "\n")); err != nil {
			return nil, err
		}
	}
	return now, nil
}
