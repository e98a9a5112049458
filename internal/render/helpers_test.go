package render

import "github.com/haproxy-haptic/haptic/internal/fieldpath"

func indexPaths(paths ...string) []fieldpath.Path {
	out := make([]fieldpath.Path, len(paths))
	for i, p := range paths {
		out[i] = fieldpath.MustParse(p)
	}
	return out
}
