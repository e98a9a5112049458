package watch

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Two objects decoded on their own share their keys and short values once interned,
// and keep their content; long values are left as they are.
func TestInternedSharesStrings(t *testing.T) {
	long := strings.Repeat("x", internMax+1)
	decode := func(name string) *unstructured.Unstructured {
		var m map[string]any
		doc := `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"` + name +
			`","labels":{"kubernetes.io/service-name":"web"}},"addressType":"IPv4","ports":[{"name":"http","port":8080}],"note":"` + long + `"}`
		if err := json.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	a, b := decode("web-a"), decode("web-b")
	want := decode("web-a").Object
	a, b = interned(a).(*unstructured.Unstructured), interned(b).(*unstructured.Unstructured)
	if !reflect.DeepEqual(a.Object, want) {
		t.Fatalf("interning changed the object: %v", a.Object)
	}
	data := func(s string) *byte { return unsafe.StringData(s) }
	keyOf := func(m map[string]any, k string) string {
		for key := range m {
			if key == k {
				return key
			}
		}
		t.Fatalf("no key %q", k)
		return ""
	}
	if data(keyOf(a.Object, "addressType")) != data(keyOf(b.Object, "addressType")) {
		t.Error("the objects do not share the key addressType")
	}
	if data(a.Object["addressType"].(string)) != data(b.Object["addressType"].(string)) {
		t.Error("the objects do not share the value IPv4")
	}
	pa := a.Object["ports"].([]any)[0].(map[string]any)["name"].(string)
	pb := b.Object["ports"].([]any)[0].(map[string]any)["name"].(string)
	if data(pa) != data(pb) {
		t.Error("the objects do not share a port name inside a list")
	}
	if data(a.Object["note"].(string)) == data(b.Object["note"].(string)) {
		t.Error("a long value was interned")
	}
}
