package validate

import (
	"fmt"
	"regexp"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/plan"
)

// A change whose bundle differs from one that passed `haproxy -c` only in maps that
// HAProxy reads as plain strings cannot fail `haproxy -c` for a reason the bundle's
// own checks (config.Check: every map line one well-formed entry) do not already
// catch: haproxy.cfg means the same (plan.SameConfig: only comments or layout
// differ) or differs in server lines that cannot fail (servers.go), certificates, crt-lists and general files are byte-identical,
// and a string map's keys and values are never parsed. Maps read as regular
// expressions, integers or addresses are parsed at load time and keep the full check.

// plainMapConverter matches the converters and fetches that read a map file's keys
// and values as strings.
var plainMapConverter = regexp.MustCompile(`^map(_str|_beg|_end|_dom|_sub|_dir)?(_str)?$`)

// mapUse finds every reference to a file: the identifier before the '(' that opens
// its argument list.
var mapUse = regexp.MustCompile(`([a-z_]+)\(([^,()\s]+)`)

// NeedsFullCheck reports whether next must be checked with `haproxy -c` although
// prev passed it, and why. prev nil always needs the check.
func NeedsFullCheck(prev, next *bundle.Bundle, layout bundle.Layout) (bool, string) {
	if prev == nil {
		return true, "no validated bundle to compare with"
	}
	if len(prev.Files) != len(next.Files) {
		return true, "files were added or removed"
	}
	var changedMaps []string
	for i, f := range next.Files {
		p := prev.Files[i]
		if p.Kind != f.Kind || p.Name != f.Name {
			return true, "files were added or removed"
		}
		if p.Hash == f.Hash {
			continue
		}
		// Comments in haproxy.cfg (notes about objects) change with routes; HAProxy
		// does not read them, and plan sees no difference either. An endpoint's
		// server lines are checked on their own (servers.go).
		if f.Kind == bundle.KindConfig && (backendsOnly(p.Content, f.Content) || plan.SameConfig(p.Content, f.Content)) {
			continue
		}
		if f.Kind != bundle.KindMap {
			return true, f.Target() + " changed"
		}
		changedMaps = append(changedMaps, layout.Path(f))
	}
	if len(changedMaps) == 0 {
		return false, ""
	}
	uses := map[string][]string{}
	text := next.Config().Content
	for _, path := range changedMaps {
		// A converter call is on one line: only the lines naming the map are
		// matched, not the whole configuration (it grows with every route).
		for _, line := range linesWith(text, path) {
			for _, m := range mapUse.FindAllStringSubmatch(line, -1) {
				if m[2] == path {
					uses[path] = append(uses[path], m[1])
				}
			}
		}
	}
	for _, path := range changedMaps {
		if len(uses[path]) == 0 && text.Contains(0, text.Len(), path) {
			return true, fmt.Sprintf("%s is used other than by a map converter", path)
		}
		for _, conv := range uses[path] {
			if !plainMapConverter.MatchString(conv) {
				return true, fmt.Sprintf("%s is read by %s, which parses its entries", path, conv)
			}
		}
	}
	return false, ""
}

// linesWith returns the lines of text that contain s.
func linesWith(text bundle.Text, s string) []string {
	var out []string
	for at := 0; ; {
		i := text.Index(at, s)
		if i < 0 {
			return out
		}
		start := max(at, text.LastIndexByte(i, '\n')+1)
		end := text.Len()
		if j := text.IndexByte(i, '\n'); j >= 0 {
			end = j
		}
		out = append(out, text.Slice(start, end))
		at = end
	}
}
