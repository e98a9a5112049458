package controller

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// unrenderedNote is the gateway library's comment for a listener it left out:
// "# gateway <ns>/<name> listener <listener> (port <n>) not rendered: <why>".
// Only a taken port is taken from it; the status computes other reasons itself.
var unrenderedNote = regexp.MustCompile(`(?m)^\s*# gateway ([^/\s]+)/(\S+) listener (\S+) \(port \d+\) not rendered: (port \d+ .+)$`)

// unrenderedListeners reads those notes from a bundle's haproxy.cfg.
func unrenderedListeners(b *bundle.Bundle) map[types.NamespacedName]map[string]string {
	out := map[types.NamespacedName]map[string]string{}
	cfg := b.Config().Content
	if !strings.Contains(cfg, " not rendered: port ") { // the usual case: no regexp over a large config
		return out
	}
	for _, m := range unrenderedNote.FindAllStringSubmatch(cfg, -1) {
		gw := types.NamespacedName{Namespace: m[1], Name: m[2]}
		if out[gw] == nil {
			out[gw] = map[string]string{}
		}
		out[gw][m[3]] = m[4]
	}
	return out
}
