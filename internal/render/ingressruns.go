package render

import (
	"reflect"
	"slices"
)

// ingressSorted are the lists of ingress fragments that the ingress library writes
// as sorted map lines, and where each line's map text starts: prefix lines and
// frontend rules start with a sort key the text leaves out (see sorted_after).
var ingressSorted = map[string]func(string) int{
	"hosts": textFrom(0), "exact": textFrom(0), "prefixExact": textFrom(0), "flags": textFrom(0),
	"rates": textFrom(0), "cors": textFrom(0), "headers": textFrom(0),
	"prefix": textAfter(" "), "rules": textAfter("\x00"),
}

// ingressMergeRuns is ingress_merge_runs(runs...): merge_fragments(runs...) for the
// merged runs of every Ingress of a render, without the per-entry work that makes a
// merge grow with the Ingresses. It returns
//
//	merged  map[string][]any     the merge of every list but ingressSorted's
//	sorted  map[string][]string  ingressSorted's string values, sorted (prefix and
//	                             rules without their sort keys, as sorted_after gives them)
//	text    map[string]string    their map text: each line and a newline
//
// The runs are remembered fragments, so a change brings one new run and drops one:
// the sorted lists and their text are kept between renders and edited by those
// runs' entries. When runs hold one key with different values (two Ingresses claim
// one host and path: the first wins) they are merged in full, as merge_fragments
// does.
func (e *Engine) ingressMergeRuns(runs ...map[string][]any) map[string]any {
	k := &e.st.kept.ingress
	merged := mergeLists(runs, func(name string) bool { return ingressSorted[name] == nil })
	sorted := make(map[string][]string, len(ingressSorted))
	text := make(map[string]string, len(ingressSorted))
	if k.update(runs) {
		for name, start := range ingressSorted {
			sorted[name], text[name] = withoutKeys(k.lists[name], start), k.texts[name]
		}
	} else {
		*k = ingressRuns{}
		full := mergeLists(runs, func(name string) bool { return ingressSorted[name] != nil })
		for name, start := range ingressSorted {
			lines := sortStrings(stringsOf(full[name]))
			sorted[name], text[name] = withoutKeys(lines, start), linesText(lines, start)
		}
	}
	return map[string]any{"merged": merged, "sorted": sorted, "text": text}
}

// withoutKeys is lines from where their text starts (lines without text dropped);
// lines itself when every text starts at 0.
func withoutKeys(lines []string, start func(string) int) []string {
	if len(lines) == 0 || start(lines[0]) == 0 && start("") == 0 {
		return lines
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if i := start(l); i >= 0 {
			out = append(out, l[i:])
		}
	}
	return out
}

// ingressRuns is what ingress_merge_runs keeps of the runs it merged last.
type ingressRuns struct {
	prev  []map[string][]any
	keys  map[string]keyedValue // "<list>\x00<key>" → its value and how many runs hold it
	lists map[string][]string   // ingressSorted's values, sorted
	texts map[string]string
}

type keyedValue struct {
	value string
	runs  int
}

// update makes k describe runs; false when a key has two values among them, or a
// value is not a string (k is then of no use).
func (k *ingressRuns) update(runs []map[string][]any) bool {
	now := make(map[uintptr]bool, len(runs))
	for _, r := range runs {
		now[identity(r)] = true
	}
	had := make(map[uintptr]bool, len(k.prev))
	var gone, came []map[string][]any
	for _, r := range k.prev {
		had[identity(r)] = true
		if !now[identity(r)] {
			gone = append(gone, r)
		}
	}
	for _, r := range runs {
		if !had[identity(r)] {
			came = append(came, r)
		}
	}
	if k.keys == nil || len(gone)+len(came) > len(runs)/2 { // most of it: start over
		*k = ingressRuns{keys: map[string]keyedValue{}, lists: map[string][]string{}, texts: map[string]string{}}
		gone, came = nil, runs
	}
	if !k.edit(gone, came) {
		return false
	}
	k.prev = slices.Clone(runs) // (the caller may reuse its slice)
	return true
}

// edit takes the runs gone out and puts the runs that came in.
func (k *ingressRuns) edit(gone, came []map[string][]any) bool {
	out, in := map[string][]string{}, map[string][]string{}
	for _, r := range gone {
		for name := range ingressSorted {
			pairs := r[name]
			for i := 0; i+1 < len(pairs); i += 2 {
				v, _ := pairs[i+1].(string)
				key, _ := pairs[i].(string)
				if key == "" {
					out[name] = append(out[name], v)
					continue
				}
				kk := name + "\x00" + key
				kv := k.keys[kk]
				if kv.runs--; kv.runs <= 0 {
					delete(k.keys, kk)
					out[name] = append(out[name], kv.value)
				} else {
					k.keys[kk] = kv
				}
			}
		}
	}
	for _, r := range came {
		for name := range ingressSorted {
			pairs := r[name]
			for i := 0; i+1 < len(pairs); i += 2 {
				v, ok := pairs[i+1].(string)
				if !ok {
					return false
				}
				key, _ := pairs[i].(string)
				if key == "" {
					in[name] = append(in[name], v)
					continue
				}
				kk := name + "\x00" + key
				kv, held := k.keys[kk]
				if held && kv.value != v {
					return false
				}
				if !held {
					kv.value = v
					in[name] = append(in[name], v)
				}
				kv.runs++
				k.keys[kk] = kv
			}
		}
	}
	for name, start := range ingressSorted {
		if len(out[name])+len(in[name]) == 0 {
			continue
		}
		edited, found := editSorted(k.lists[name], out[name], in[name])
		if !found {
			return false
		}
		k.texts[name] = spliceText(k.lists[name], edited, k.texts[name], start)
		k.lists[name] = edited
	}
	return true
}

// identity is a fragment's identity: runs are remembered fragments, the same map
// from one render to the next.
func identity(f map[string][]any) uintptr {
	return uintptr(reflect.ValueOf(f).UnsafePointer())
}

// mergeLists is mergeFragments of frags' lists that take names.
func mergeLists(frags []map[string][]any, take func(name string) bool) map[string][]any {
	picked := make([]map[string][]any, len(frags))
	for i, f := range frags {
		p := make(map[string][]any, len(f))
		for name, pairs := range f {
			if take(name) {
				p[name] = pairs
			}
		}
		picked[i] = p
	}
	return mergeFragments(picked)
}
