package watch

import (
	"hash/maphash"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// internMax is the longest string value interned: keys, names, label values, kinds
// and the like, not certificates or annotations' JSON.
const internMax = 64

// sharedMax is the longest encoding of a subtree that objects share (share): a
// port, a condition, a status that every object of a kind repeats.
const sharedMax = 128

// seenMax bounds the subtrees seen once: the table is emptied when it is full, and a
// subtree that objects repeat is soon seen twice again.
const seenMax = 1 << 14

// interner makes the objects of one informer share what they repeat, since the
// informers hold every object and were half of the controller's heap at 5,000 routes
// of each kind:
//   - map keys and short string values are canonical copies (unique.Make), boxed
//     once;
//   - an update shares every subtree that did not change with the version it
//     replaces (its spec, when only its status moved, and the controller's own
//     status writes are most updates): the live store keeps the version it admitted
//     while the informer holds the new one;
//   - a small subtree seen in two objects (a port, a condition, an empty status) is
//     kept once, for every object that repeats it.
//
// Cached objects are never modified (the informers' contract), so sharing is safe.
type interner struct {
	// cached is the informer's version of the object under key (nil: none).
	cached func(key string) any

	mu     sync.Mutex
	shared map[string]any      // small subtrees seen twice, by their encoding
	seen   map[uint64]struct{} // the encodings' hashes of small subtrees seen once
	seed   maphash.Seed
	enc    []byte // the encoding of the subtrees being interned, innermost last
}

func newInterner(cached func(key string) any) *interner {
	return &interner{cached: cached, shared: map[string]any{}, seen: map[uint64]struct{}{}, seed: maphash.MakeSeed()}
}

// forgetSeen empties the tables of subtrees seen, letting their memory go (a map
// emptied in place keeps its size).
func (in *interner) forgetSeen() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.shared, in.seen = map[string]any{}, map[uint64]struct{}{}
}

// object returns obj, a whole object from the API server, interned.
func (in *interner) object(obj any) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj
	}
	var prev map[string]any
	if in.cached != nil {
		if key, err := cache.MetaNamespaceKeyFunc(u); err == nil {
			if p, ok := in.cached(key).(*unstructured.Unstructured); ok {
				prev = p.Object
			}
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.enc = in.enc[:0]
	top, _ := in.mapValue(u.Object, prev, false) // an object's own map is its own
	u.Object = top.(map[string]any)
	return obj
}

// unrepeated are keys whose values differ from object to object: interning them
// would only grow the tables of canonical values. (A condition's lastTransitionTime
// is not one: the conditions of the routes accepted in one second are alike.)
var unrepeated = map[string]bool{"uid": true, "resourceVersion": true, "creationTimestamp": true}

// value interns v, sharing it with prev (the same place in the replaced version)
// where equal. It appends v's encoding to in.enc and reports whether v may be
// shared across objects: no unrepeated or long value, and a short encoding.
func (in *interner) value(v, prev any) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		p, _ := prev.(map[string]any)
		return in.mapValue(t, p, true)
	case []any:
		p, _ := prev.([]any)
		return in.list(t, p)
	case string:
		if len(t) > internMax {
			return v, false
		}
		in.enc = strconv.AppendQuote(append(in.enc, 's'), t)
		return unique.Make[any](t).Value(), true
	case int64:
		in.enc = strconv.AppendInt(append(in.enc, 'i'), t, 10)
		return unique.Make[any](t).Value(), true
	case float64: // rare in objects: not made canonical (-0 equals 0, but is not 0)
		if math.IsNaN(t) { // not equal to itself: never in a table key
			return v, false
		}
		in.enc = strconv.AppendFloat(append(in.enc, 'f'), t, 'g', -1, 64)
		return v, true
	case bool:
		in.enc = strconv.AppendBool(in.enc, t)
		return v, true
	case nil:
		in.enc = append(in.enc, 'n')
		return v, true
	}
	return v, false
}

// mapValue interns a map in place (a decoded object's maps are its own: a copy
// made every decoded map garbage among the kept ones, half the startup's
// allocations and the heap's holes after it); a map that may not be shared with
// other objects (!mayShare) is still shared with prev when equal.
func (in *interner) mapValue(m, prev map[string]any, mayShare bool) (any, bool) {
	start := len(in.enc)
	in.enc = append(in.enc, '{')
	var keysArr [16]string
	keys := keysArr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the encoding must not depend on the map's order
	same, shareable := prev != nil && len(prev) == len(m), mayShare
	for _, k := range keys {
		x := m[k]
		px, inPrev := prev[k]
		var cx any
		if s, ok := x.(string); ok && unrepeated[k] {
			cx, shareable = x, false
			if ps, ok := px.(string); ok && ps == s {
				cx = px
			}
		} else {
			in.enc = strconv.AppendQuote(in.enc, k)
			var ok bool
			cx, ok = in.value(x, px)
			shareable = shareable && ok
		}
		if !shareable || len(in.enc)-start > sharedMax {
			shareable, in.enc = false, in.enc[:start]
		}
		same = same && inPrev && identical(cx, px)
		delete(m, k) // (its key made canonical: no map grows by a key put back)
		m[unique.Make(k).Value()] = cx
	}
	in.enc = append(in.enc, '}')
	if same {
		return prev, shareable
	}
	return in.share(m, start, shareable), shareable
}

// list interns a list in place (a decoded object's lists are its own).
func (in *interner) list(l, prev []any) (any, bool) {
	start := len(in.enc)
	in.enc = append(in.enc, '[')
	same, shareable := prev != nil && len(prev) == len(l), true
	for i, x := range l {
		var px any
		if i < len(prev) {
			px = prev[i]
		}
		var ok bool
		l[i], ok = in.value(x, px)
		shareable = shareable && ok
		if !shareable || len(in.enc)-start > sharedMax {
			shareable, in.enc = false, in.enc[:start]
		}
		same = same && identical(l[i], px)
	}
	in.enc = append(in.enc, ']')
	if same {
		return prev, shareable
	}
	return in.share(l, start, shareable), shareable
}

// share returns the kept subtree with v's encoding (from start), keeping v when it
// is the second seen.
func (in *interner) share(v any, start int, shareable bool) any {
	if !shareable {
		return v
	}
	enc := in.enc[start:]
	if kept, ok := in.shared[string(enc)]; ok {
		return kept
	}
	h := maphash.Bytes(in.seed, enc)
	if _, ok := in.seen[h]; !ok {
		if len(in.seen) >= seenMax {
			clear(in.seen)
		}
		in.seen[h] = struct{}{}
		return v
	}
	if len(in.shared) >= seenMax { // many subtrees repeat: keep the newest
		clear(in.shared)
	}
	in.shared[string(enc)] = v
	return v
}

// identical reports whether a and b are the same value: the same map or list, or
// equal scalars.
func identical(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (x == nil) == (y == nil) && (len(x) == 0 || &x[0] == &y[0])
	}
	return a == b
}
