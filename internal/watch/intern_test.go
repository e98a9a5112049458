package watch

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strconv"
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
	decodedMetadata := reflect.ValueOf(a.Object["metadata"]).UnsafePointer()
	in := newInterner(nil)
	a, b = in.object(a).(*unstructured.Unstructured), in.object(b).(*unstructured.Unstructured)
	if !reflect.DeepEqual(a.Object, want) {
		t.Fatalf("interning changed the object: %v", a.Object)
	}
	if reflect.ValueOf(a.Object["metadata"]).UnsafePointer() != decodedMetadata {
		t.Error("interning copied the object's own metadata map (garbage among the kept maps)")
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

// decodeObject decodes doc as the informers' decoder does (numbers as int64).
func decodeObject(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	return u
}

func ingressDoc(name, rv, host, status string) string {
	return `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"` + name + `","namespace":"web","uid":"u-` + name +
		`","resourceVersion":"` + rv + `","labels":{"app":"web"}},"spec":{"ingressClassName":"haptic","rules":[{"host":"` + host +
		`","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"name":"http"}}}}]}}]},"status":` + status + `}`
}

// cachedOne is an informer's cache of one object per key, as interner.cached reads it.
type cachedOne map[string]*unstructured.Unstructured

func (c cachedOne) get(key string) any {
	if o, ok := c[key]; ok {
		return o
	}
	return nil
}

func (c cachedOne) put(in *interner, u *unstructured.Unstructured) *unstructured.Unstructured {
	u = in.object(u).(*unstructured.Unstructured)
	c[u.GetNamespace()+"/"+u.GetName()] = u
	return u
}

func same(a, b any) bool { return identical(a, b) }

// An update shares what did not change with the version it replaces, and keeps its
// own content: a status write leaves the spec and labels where they were; a changed
// host makes a new spec down to the rule, but the backend under it is the old one.
func TestInternerSharesWithReplacedVersion(t *testing.T) {
	cache := cachedOne{}
	in := newInterner(cache.get)
	v1 := cache.put(in, decodeObject(t, ingressDoc("a", "1", "a.example.com", `{"loadBalancer":{}}`)))
	doc2 := ingressDoc("a", "2", "a.example.com", `{"loadBalancer":{"ingress":[{"ip":"10.0.0.1"}]}}`)
	v2 := cache.put(in, decodeObject(t, doc2))
	if !reflect.DeepEqual(v2.Object, decodeObject(t, doc2).Object) {
		t.Fatalf("the update lost its content: %v", v2.Object)
	}
	if !same(v1.Object["spec"], v2.Object["spec"]) {
		t.Error("a status write did not share the spec with the replaced version")
	}
	if same(v1.Object["metadata"], v2.Object["metadata"]) || same(v1.Object["status"], v2.Object["status"]) {
		t.Error("a changed subtree was shared")
	}
	labels := func(u *unstructured.Unstructured) any { return u.Object["metadata"].(map[string]any)["labels"] }
	if !same(labels(v1), labels(v2)) {
		t.Error("the unchanged labels were not shared")
	}
	doc3 := ingressDoc("a", "3", "b.example.com", `{"loadBalancer":{"ingress":[{"ip":"10.0.0.1"}]}}`)
	v3 := cache.put(in, decodeObject(t, doc3))
	if !reflect.DeepEqual(v3.Object, decodeObject(t, doc3).Object) {
		t.Fatalf("the update lost its content: %v", v3.Object)
	}
	rule := func(u *unstructured.Unstructured) map[string]any {
		return u.Object["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)
	}
	if same(v2.Object["spec"], v3.Object["spec"]) || same(rule(v2), rule(v3)) {
		t.Error("a changed host's rule was shared")
	}
	if !same(rule(v2)["http"], rule(v3)["http"]) || !same(v2.Object["status"], v3.Object["status"]) {
		t.Error("the unchanged paths or status were not shared")
	}
}

// A small subtree that objects repeat is kept once from its second sighting on, with
// its content; one that holds a value unique to an object (a uid) is never kept, and
// neither is one seen once.
func TestInternerSharesRepeatedSubtrees(t *testing.T) {
	in := newInterner(nil)
	svc := func(name, ip string) *unstructured.Unstructured {
		doc := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"` + name + `","namespace":"web","uid":"u-` + name +
			`","ownerReferences":[{"kind":"App","name":"owner","uid":"u-owner"}]},"spec":{"clusterIPs":["` + ip +
			`"],"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":8080}]},"status":{"loadBalancer":{}}}`
		got := in.object(decodeObject(t, doc)).(*unstructured.Unstructured)
		if !reflect.DeepEqual(got.Object, decodeObject(t, doc).Object) {
			t.Fatalf("%s lost its content: %v", name, got.Object)
		}
		return got
	}
	a, b, c := svc("a", "10.0.0.1"), svc("b", "10.0.0.2"), svc("c", "10.0.0.3")
	ports := func(u *unstructured.Unstructured) any { return u.Object["spec"].(map[string]any)["ports"] }
	owners := func(u *unstructured.Unstructured) any {
		return u.Object["metadata"].(map[string]any)["ownerReferences"]
	}
	if !same(ports(b), ports(c)) || !same(b.Object["status"], c.Object["status"]) {
		t.Error("the ports or status seen a third time are not the second's")
	}
	if same(ports(a), ports(b)) {
		t.Error("a subtree was kept at its first sighting")
	}
	if same(owners(b), owners(c)) {
		t.Error("a subtree holding a uid was shared")
	}
	for enc := range in.shared {
		if strings.Contains(enc, "10.0.0.") {
			t.Errorf("a subtree seen once was kept: %s", enc)
		}
	}
	// Forgotten (an informer's initial list is done): the tables start again, and
	// what the objects share stays shared.
	in.forgetSeen()
	if len(in.shared) != 0 || len(in.seen) != 0 || !same(ports(b), ports(c)) {
		t.Fatalf("forgetSeen left %d shared and %d seen", len(in.shared), len(in.seen))
	}
	d, e, f := svc("d", "10.0.0.4"), svc("e", "10.0.0.5"), svc("f", "10.0.0.6")
	if same(ports(d), ports(c)) || same(ports(d), ports(e)) || !same(ports(e), ports(f)) {
		t.Error("after forgetSeen a subtree is not kept again at its second sighting")
	}
}

// BenchmarkInternedObjects reports the heap that 5,000 routes of the benchmark mix
// hold once interned: per route an Ingress in two versions (before and after its
// status write; the live store keeps the first), a Service and two EndpointSlices.
func BenchmarkInternedObjects(b *testing.B) {
	const n = 5000
	docs := func(i int) []string {
		name := "app-" + strconv.Itoa(i)
		ip := func(j int) string { return "10.1." + strconv.Itoa(i/200) + "." + strconv.Itoa(i%200+j) }
		meta := func(kind, obj string) string {
			return `"metadata":{"name":"` + obj + `","namespace":"bench","uid":"u-` + kind + obj + `","resourceVersion":"` + strconv.Itoa(i) +
				`","creationTimestamp":"2026-12-06T18:55:49Z","labels":{"app":"` + name + `","kubernetes.io/service-name":"` + name + `"}}`
		}
		slice := func(j int) string {
			return `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",` + meta("eps", name+"-"+strconv.Itoa(j)) +
				`,"addressType":"IPv4","ports":[{"name":"http","port":8080,"protocol":"TCP"}],"endpoints":[{"addresses":["` + ip(j) +
				`"],"conditions":{"ready":true,"serving":true,"terminating":false},"nodeName":"node-1"}]}`
		}
		svc := `{"apiVersion":"v1","kind":"Service",` + meta("svc", name) + `,"spec":{"clusterIP":"` + ip(7) + `","clusterIPs":["` + ip(7) +
			`"],"internalTrafficPolicy":"Cluster","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":8080}],"sessionAffinity":"None","type":"ClusterIP"},"status":{"loadBalancer":{}}}`
		return []string{ingressDoc(name, "1", name+".example.com", `{"loadBalancer":{}}`),
			ingressDoc(name, "2", name+".example.com", `{"loadBalancer":{"ingress":[{"ip":"10.0.0.1"}]}}`), svc, slice(1), slice(2)}
	}
	for b.Loop() {
		cache := cachedOne{}
		in := newInterner(cache.get)
		var held []*unstructured.Unstructured
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range n {
			for j, doc := range docs(i) {
				u := cache.put(in, decodeObject(b, doc))
				if j == 0 { // the live store's version of the Ingress
					held = append(held, u)
				}
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/route")
		runtime.KeepAlive(held)
		runtime.KeepAlive(cache)
	}
}
