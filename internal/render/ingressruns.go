package render

import (
	"reflect"
	"slices"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// ingressSorted are the lists of ingress fragments that the ingress library writes
// as sorted lines, and the separator that ends each line's sort key: prefix lines
// and frontend rules start with a key their text leaves out (see sorted_after).
var ingressSorted = map[string]string{
	"hosts": "", "exact": "", "prefixExact": "", "flags": "", "rates": "", "cors": "", "headers": "",
	"prefix": " ", "rules": "\x00",
}

func isSorted(name string) bool { _, ok := ingressSorted[name]; return ok }

// textStart is where a line's text starts after the sort key sep ends.
func textStart(sep string) func(string) int {
	if sep == "" {
		return textFrom(0)
	}
	return textAfter(sep)
}

// ingressMergeRuns is ingress_merge_runs(runs...): merge_fragments(runs...) for the
// merged runs of every Ingress of a render, without the per-entry work that makes a
// merge grow with the Ingresses. It returns
//
//	merged    map[string][]any     the merge of every list but ingressSorted's and
//	                               the backends
//	text      map[string]string    ingressSorted's map text: their string values,
//	                               sorted, each a line (prefix and rules without their
//	                               sort keys, as sorted_after gives them)
//	backends  []*IngressBackend    ingress_backends of the merged backends list
//
// The runs are remembered fragments, so a change brings one new run and drops one:
// the sorted lists and their text are kept between renders and edited by those
// runs' entries, and the backends are the last render's, but for the runs that
// changed. When runs hold one key with different values (two Ingresses claim one
// host and path: the first wins) they are merged in full, as merge_fragments does.
func (e *Engine) ingressMergeRuns(runs ...map[string][]any) map[string]any {
	k := &e.st.kept.ingress
	text := make(map[string]bundle.Text, len(ingressSorted))
	var merged map[string][]any
	var backends []*IngressBackend
	if k.update(runs) {
		merged = k.mergeUnsorted(runs)
		for name := range ingressSorted {
			text[name] = k.sorted[name].text
		}
		if k.repeated[backendsList] > 0 { // (a Service port two Ingresses route to)
			k.backends = joined[map[string][]any, *IngressBackend]{}
			backends = ingressBackendsOf(mergeLists(runs, isBackends)[backendsList])
		} else {
			backends = k.backends.of(runs, sameMapOf, func(r map[string][]any) []*IngressBackend {
				return ingressBackendsOf(r[backendsList])
			})
		}
	} else {
		*k = ingressRuns{}
		merged = mergeLists(runs, func(name string) bool { return !isSorted(name) && !isBackends(name) })
		full := mergeLists(runs, func(name string) bool { return isSorted(name) || isBackends(name) })
		for name, sep := range ingressSorted {
			text[name] = bundle.TextOf(linesText(sortStrings(stringsOf(full[name])), textStart(sep)))
		}
		backends = ingressBackendsOf(full[backendsList])
	}
	return map[string]any{"merged": merged, "text": text, "backends": backends}
}

// backendsList is the fragments' list of backends: ingress_merge_runs gives it as
// IngressBackend values.
const backendsList = "backends"

func isBackends(name string) bool { return name == backendsList }

// ingressRuns is what ingress_merge_runs keeps of the runs it merged last.
type ingressRuns struct {
	prev []map[string][]any
	keys map[listKey]keyedValue // a list's key → its value and how many runs hold it
	// sorted are ingressSorted's values, sorted, and their text
	sorted map[string]sortedText
	// backends are the runs' backends when no backend is in two runs
	backends joined[map[string][]any, *IngressBackend]
	// occurs counts the pairs of the other lists by list and key; repeated is, per
	// list, how many of its keys occur more than once (only those lists need the
	// merge that keeps a key's first pair: the others are the runs' lists in a row).
	occurs   map[listKey]int
	repeated map[string]int
}

type listKey struct{ list, key string }

type keyedValue struct {
	value string
	runs  int
}

// update makes k describe runs; false when a key has two values among them, or a
// value is not a string (k is then of no use).
func (k *ingressRuns) update(runs []map[string][]any) bool {
	gone, came := runChanges(k.prev, runs, identity)
	if k.keys == nil || len(gone)+len(came) > len(runs)/2 { // most of it: start over
		sortedPairs, otherPairs := 0, 0 // (the maps made as large as they get: no growing)
		for _, r := range runs {
			for name, pairs := range r {
				if isSorted(name) {
					sortedPairs += len(pairs) / 2
				} else {
					otherPairs += len(pairs) / 2
				}
			}
		}
		*k = ingressRuns{keys: make(map[listKey]keyedValue, sortedPairs), sorted: map[string]sortedText{},
			occurs: make(map[listKey]int, otherPairs), repeated: map[string]int{}}
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
	for _, r := range gone {
		k.countUnsorted(r, -1)
	}
	for _, r := range came {
		k.countUnsorted(r, 1)
	}
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
				kk := listKey{name, key}
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
				kk := listKey{name, key}
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
	var names []string
	size := 0
	for name := range ingressSorted {
		if !sameLines(out[name], in[name]) { // (else what came brings the lines of what went)
			names, size = append(names, name), size+k.sorted[name].text.Len()
		}
	}
	edited, found := make([]sortedText, len(names)), make([]bool, len(names))
	edit := func(i int) {
		name := names[i]
		edited[i], found[i] = k.sorted[name].edited(out[name], in[name], textStart(ingressSorted[name]))
	}
	eachHereOrApart(size >= spliceApartSize, len(names), edit)
	for i, name := range names {
		if !found[i] {
			return false
		}
		k.sorted[name] = edited[i]
	}
	return true
}

// countUnsorted adds (d = 1) or takes out (d = -1) the keyed pairs run r has in the
// lists ingressSorted does not name.
func (k *ingressRuns) countUnsorted(r map[string][]any, d int) {
	for name, pairs := range r {
		if isSorted(name) {
			continue
		}
		for i := 0; i+1 < len(pairs); i += 2 {
			key, _ := pairs[i].(string)
			if key == "" {
				continue // never merged away
			}
			k.repeated[name] += countShared(k.occurs, listKey{name, key}, d)
		}
	}
}

// mergeUnsorted is mergeLists of runs' lists that ingressSorted does not name, but
// the backends: a list none of whose keys occurs twice is the runs' lists in a row,
// without a set of its keys.
func (k *ingressRuns) mergeUnsorted(runs []map[string][]any) map[string][]any {
	out := mergeLists(runs, func(name string) bool { return !isSorted(name) && !isBackends(name) && k.repeated[name] > 0 })
	sizes := map[string]int{}
	for _, r := range runs {
		for name, pairs := range r {
			if !isSorted(name) && !isBackends(name) && k.repeated[name] == 0 {
				sizes[name] += len(pairs)
			}
		}
	}
	for name, n := range sizes {
		list := make([]any, 0, n)
		for _, r := range runs {
			list = append(list, r[name]...)
		}
		out[name] = list
	}
	return out
}

func sameMapOf(a, b map[string][]any) bool { return identity(a) == identity(b) }

// identity is a fragment's identity: runs are remembered fragments, the same map
// from one render to the next.
func identity(f map[string][]any) uintptr {
	return uintptr(reflect.ValueOf(f).UnsafePointer())
}
