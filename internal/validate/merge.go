package validate

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"

	v1alpha1 "github.com/haproxy-haptic/haptic/api/v1alpha1"
)

// GlobalTest is the name of the test whose fixtures and extraContext every other test
// inherits; it is never run on its own.
const GlobalTest = "_global"

// MergeGlobal returns test with the _global test's fixtures and extraContext merged
// in. Per watched resource, global objects come first; a test object with the same
// kind, namespace and name replaces the global one in place, other test objects
// follow in order. extraContext keys of the test override global keys. Neither input
// is modified.
func MergeGlobal(global, test v1alpha1.ValidationTest) v1alpha1.ValidationTest {
	out := *test.DeepCopy()
	if len(global.Fixtures) > 0 {
		out.Fixtures = map[string][]runtime.RawExtension{}
		for name, objs := range global.Fixtures {
			out.Fixtures[name] = mergeObjects(objs, test.Fixtures[name])
		}
		for name, objs := range test.Fixtures {
			if _, ok := global.Fixtures[name]; !ok {
				out.Fixtures[name] = copyObjects(objs)
			}
		}
	}
	out.ExtraContext = mergeExtraContext(global.ExtraContext, test.ExtraContext)
	return out
}

func copyObjects(objs []runtime.RawExtension) []runtime.RawExtension {
	out := make([]runtime.RawExtension, len(objs))
	for i := range objs {
		objs[i].DeepCopyInto(&out[i])
	}
	return out
}

func mergeObjects(global, test []runtime.RawExtension) []runtime.RawExtension {
	out := copyObjects(global)
	pos := map[string]int{}
	for i, o := range out {
		if id, ok := identity(o); ok {
			pos[id] = i
		}
	}
	for _, o := range test {
		var c runtime.RawExtension
		o.DeepCopyInto(&c)
		if id, ok := identity(o); ok {
			if i, dup := pos[id]; dup {
				out[i] = c
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// identity is kind/namespace/name of a fixture object; objects that do not decode
// have none and are never replaced.
func identity(o runtime.RawExtension) (string, bool) {
	raw := o.Raw
	if len(raw) == 0 && o.Object != nil {
		var err error
		if raw, err = json.Marshal(o.Object); err != nil {
			return "", false
		}
	}
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Metadata.Name == "" {
		return "", false
	}
	return obj.Kind + "\x00" + obj.Metadata.Namespace + "\x00" + obj.Metadata.Name, true
}

// mergeExtraContext overlays the test's top-level keys on the global ones. When either
// side is not a JSON object the test's value wins whole.
func mergeExtraContext(global, test *runtime.RawExtension) *runtime.RawExtension {
	if global == nil || len(global.Raw) == 0 {
		return test.DeepCopy()
	}
	if test == nil || len(test.Raw) == 0 {
		return global.DeepCopy()
	}
	var g, t map[string]json.RawMessage
	if json.Unmarshal(global.Raw, &g) != nil || json.Unmarshal(test.Raw, &t) != nil {
		return test.DeepCopy()
	}
	if g == nil {
		g = map[string]json.RawMessage{}
	}
	for k, v := range t {
		g[k] = v
	}
	raw, err := json.Marshal(g) // map keys sorted: deterministic
	if err != nil {
		return test.DeepCopy()
	}
	return &runtime.RawExtension{Raw: raw}
}
