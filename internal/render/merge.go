package render

import (
	"strings"

	"github.com/open2b/scriggo/native"
)

// mergeBuiltins are the helpers that assemble per-object fragments (cached values,
// docs/rendering.md) into a render's aggregate lists. Templates loop over objects to
// build fragments; looping again over every fragment's lines in the template would
// cost a virtual-machine step and often a reflect call per line, so the merge is Go.
func mergeBuiltins() native.Declarations {
	return native.Declarations{
		"merge_fragments": mergeFragments,
		"values_of":       valuesOf,
		"strings_of":      stringsOf,
		"maps_of":         mapsOf,
		"map_keys_of":     mapKeysOf,
		"sorted_after":    sortedAfter,
	}
}

// mergeFragments merges fragments in order. A fragment maps a list name to key, value
// pairs (a flat list: key, value, key, value, ...). The result is a fragment too: per
// list, each key's first pair, in the order the keys first appear; a pair with an empty
// key is never merged away (notes, lines that are never duplicates). Merges compose:
// merging merged fragments is merging all of theirs.
//
// A key is what makes an entry unique across objects: two Ingresses routing the same
// host and path give the same key, and the first Ingress wins.
func mergeFragments(frags []map[string][]any) map[string][]any {
	return mergeLists(frags, nil)
}

// mergeLists is mergeFragments of the lists take names (all of them when take is nil).
func mergeLists(frags []map[string][]any, take func(name string) bool) map[string][]any {
	// Sized first: the merge of a render's runs holds every object's entries, and
	// growing the lists and sets as it goes was a third of its cost.
	sizes := map[string]int{}
	most := 0
	for _, f := range frags {
		for name, pairs := range f {
			if take == nil || take(name) {
				sizes[name] += len(pairs)
				most = max(most, sizes[name])
			}
		}
	}
	out := make(map[string][]any, len(sizes))
	seen := make(map[string]bool, most/2) // one list's keys at a time
	for name, n := range sizes {
		list := make([]any, 0, n)
		clear(seen)
		for _, f := range frags {
			pairs := f[name]
			for i := 0; i+1 < len(pairs); i += 2 {
				k, _ := pairs[i].(string)
				if k != "" {
					if seen[k] {
						continue
					}
					seen[k] = true
				}
				list = append(list, pairs[i], pairs[i+1])
			}
		}
		out[name] = list
	}
	return out
}

// valuesOf returns the values of a fragment's list of key, value pairs.
func valuesOf(pairs []any) []any {
	out := make([]any, 0, len(pairs)/2)
	for i := 1; i < len(pairs); i += 2 {
		out = append(out, pairs[i])
	}
	return out
}

// stringsOf returns the string values of a fragment's list of key, value pairs; other
// values are skipped. A nil list gives an empty one.
func stringsOf(pairs []any) []string {
	out := make([]string, 0, len(pairs)/2)
	for i := 1; i < len(pairs); i += 2 {
		if s, ok := pairs[i].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// mapsOf returns the map values of a fragment's list of key, value pairs (backend
// entries); other values are skipped.
func mapsOf(pairs []any) []map[string]any {
	out := make([]map[string]any, 0, len(pairs)/2)
	for i := 1; i < len(pairs); i += 2 {
		if m, ok := pairs[i].(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// mapKeysOf returns the keys of the map values mapsOf returns, in the same order
// (backend names, for key_runs).
func mapKeysOf(pairs []any) []string {
	out := make([]string, 0, len(pairs)/2)
	for i := 1; i < len(pairs); i += 2 {
		if _, ok := pairs[i].(map[string]any); ok {
			k, _ := pairs[i-1].(string)
			out = append(out, k)
		}
	}
	return out
}

// sortedAfter sorts lines that start with a sort key and returns each without it:
// the text after the first sep (a line without sep is dropped). Templates sort map
// lines by a key they then remove ("199990 <key> <value>", "<phase> <name>\x00<rule>").
func sortedAfter(lines []string, sep string) []string {
	return afterKeys(sortStrings(lines), sep)
}

// afterKeys is each line's text after its first sep (lines without sep dropped),
// in place; lines as they are when sep is "" (they have no sort key).
func afterKeys(lines []string, sep string) []string {
	if sep == "" {
		return lines
	}
	out := lines[:0]
	for _, l := range lines {
		if _, after, ok := strings.Cut(l, sep); ok {
			out = append(out, after)
		}
	}
	return out
}
