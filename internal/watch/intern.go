package watch

import (
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// internMax is the longest string value interned: keys, names, label values, kinds
// and the like, not certificates or annotations' JSON.
const internMax = 64

// interned returns obj, a whole object from the API server, with the map keys and
// short string values of its decoded JSON replaced by canonical copies
// (unique.Make), its maps made at their size. Thousands of objects of a kind repeat
// the same keys and most short values (apiVersion, kind, label keys, namespaces, port
// names, conditions), each decoded on its own, and the informers hold every object:
// they were half the controller's heap at 5,000 HTTPRoutes.
func interned(obj any) any {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.Object, _ = intern(u.Object).(map[string]any)
	}
	return obj
}

// unrepeated are keys whose values differ from object to object: interning them
// would only grow the table of canonical strings.
var unrepeated = map[string]bool{"uid": true, "resourceVersion": true, "creationTimestamp": true,
	"lastTransitionTime": true, "generateName": true}

func intern(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if s, ok := x.(string); ok && unrepeated[k] {
				out[unique.Make(k).Value()] = s
				continue
			}
			out[unique.Make(k).Value()] = intern(x)
		}
		return out
	case []any:
		for i, x := range t {
			t[i] = intern(x)
		}
		return t
	case string:
		if len(t) <= internMax {
			return unique.Make(t).Value()
		}
	}
	return v
}
