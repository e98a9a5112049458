package render

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// A unit's output is reused while what it read is unchanged; a changed object renders
// its unit again, and the file equals a fresh render every time.
func TestUnitsReuseWhatDidNotChange(t *testing.T) {
	spec := testSpec(`global
{% var calls = 0 %}
{% for _, ing := range resources.Ingresses.List() %}
{% if unit("ing " + ing.Metadata.Name, ing.Metadata.Name) %}
{% var v = cached_value("class " + ing.Metadata.Name, func() any { return "class " + resources.Ingresses.GetSingle(ing.Metadata.Namespace, ing.Metadata.Name).Spec.IngressClassName }, ing.Metadata.Name) %}
# {{ ing.Metadata.Name }} {{ v }} {{ first_seen("x", ing.Metadata.Name) }}
{% end %}{{ end_unit("ing " + ing.Metadata.Name) }}
{% end %}
`)
	e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := ingress("ns", "a", "haptic"), ingress("ns", "b", "haptic")
	b2 := ingress("ns", "b", "other")
	steps := []struct {
		snap             *snapshot.Snapshot
		reused, rendered int
		want             string
	}{
		{testSnapshot(a, b), 0, 4, "# a class haptic true\n    # b class haptic true"},
		{testSnapshot(a, b), 0, 0, "# a class haptic true\n    # b class haptic true"}, // the file itself is reused
		// unit a is reused (so its cached_value is not called); unit b and its value render
		{testSnapshot(a, b2), 1, 2, "# a class haptic true\n    # b class other true"},
		{testSnapshot(b2), 0, 0, "# b class other true"},
	}
	for i, s := range steps {
		res, err := e.Render(context.Background(), Input{Snapshot: s.snap})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Bundle.Config().Content.String()
		if !strings.Contains(got, s.want) {
			t.Errorf("step %d: got\n%s\nwant it to hold %q", i, got, s.want)
		}
		fresh, err := e.Render(context.Background(), Input{Snapshot: s.snap, Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		if fresh.Bundle.Config().Content.String() != got {
			t.Errorf("step %d: incremental output differs from a fresh render:\n%s\n---\n%s", i, got, fresh.Bundle.Config().Content.String())
		}
		if i == 2 && (res.Reuse.Units != s.reused || res.Reuse.UnitsRendered != s.rendered) {
			t.Errorf("step %d: reused %d units, rendered %d; want %d and %d", i, res.Reuse.Units, res.Reuse.UnitsRendered, s.reused, s.rendered)
		}
		if i == 1 && res.Reuse.Files != 1 {
			t.Errorf("step %d: the unchanged file was not reused: %+v", i, res.Reuse)
		}
		// the fresh render becomes the memo: render the step again incrementally
		if _, err := e.Render(context.Background(), Input{Snapshot: s.snap}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReusedFragmentsNoteAgain: a note made by a fragment that a later render reuses
// is in that render's result too (status would otherwise lose it).
func TestReusedFragmentsNoteAgain(t *testing.T) {
	spec := testSpec(`global
{% for _, ing := range resources.Ingresses.List() %}
{% if unit("ing " + ing.Metadata.Name, ing) %}
{% note("Ingress", ing.Metadata.Namespace, ing.Metadata.Name, "", "Noted", "class " + ing.Spec.IngressClassName) %}
{% end %}{{ end_unit("ing " + ing.Metadata.Name) }}
{% end %}
`)
	e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	a, b, b2 := ingress("ns", "a", "haptic"), ingress("ns", "b", "haptic"), ingress("ns", "b", "other")
	for i, snap := range []*snapshot.Snapshot{testSnapshot(a, b), testSnapshot(a, b), testSnapshot(a, b2)} {
		res, err := e.Render(context.Background(), Input{Snapshot: snap})
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := e.Render(context.Background(), Input{Snapshot: snap, Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) != 2 || fmt.Sprint(res.Notes) != fmt.Sprint(fresh.Notes) {
			t.Errorf("step %d: notes %v, a fresh render notes %v", i, res.Notes, fresh.Notes)
		}
		if i == 1 && res.Reuse.Files != 1 {
			t.Errorf("step %d: nothing was reused (%+v): the test proves nothing", i, res.Reuse)
		}
	}
}

// cached/end_cached: a value computed in the template is reused while what it read
// (here one Ingress, by key) is unchanged and its inputs are equal; a changed Ingress
// computes its own value again and only that one.
func TestCachedValuesComputedInPlace(t *testing.T) {
	spec := testSpec(`global
{% var computed = 0 %}
{% for _, ing := range resources.Ingresses.List() %}
{% var key = "class " + ing.Metadata.Name %}
{% var v, ok = cached(key, ing.Metadata.Namespace) %}
{% if !ok %}
{% computed++ %}
{% v = end_cached(key, resources.Ingresses.GetSingle(ing.Metadata.Namespace, ing.Metadata.Name).Spec.IngressClassName) %}
{% end %}
# {{ ing.Metadata.Name }} {{ v.(string) }}
{% end %}
# computed {{ computed }}
`)
	e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := ingress("ns", "a", "haptic"), ingress("ns", "b", "haptic"), ingress("ns", "c", "haptic")
	b2 := ingress("ns", "b", "other")
	for i, s := range []struct {
		snap *snapshot.Snapshot
		want string
	}{
		{testSnapshot(a, b), "# a haptic\n    # b haptic\n    # computed 2"},
		{testSnapshot(a, b2, c), "# a haptic\n    # b other\n    # c haptic\n    # computed 2"}, // b changed, c is new
		{testSnapshot(a, c), "# a haptic\n    # c haptic\n    # computed 0"},
	} {
		res, err := e.Render(context.Background(), Input{Snapshot: s.snap})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Bundle.Config().Content.String(); !strings.Contains(got, s.want) {
			t.Errorf("step %d: got\n%s\nwant it to hold %q", i, got, s.want)
		}
	}
	// A fresh render computes every value.
	res, err := e.Render(context.Background(), Input{Snapshot: testSnapshot(a, c), Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Bundle.Config().Content.String(); !strings.Contains(got, "# computed 2") {
		t.Errorf("a fresh render reused values:\n%s", got)
	}
}

// What the libraries' helpers keep belongs to one extraContext: renders with two
// (the live fleet's and the admission webhook's, alternating on one engine) each
// find their own, and a Fresh render starts from nothing and leaves it alone.
func TestKeptCachesFollowTheExtraContext(t *testing.T) {
	e, err := Compile(testSpec("global\n"), Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	snap := testSnapshot(ingress("ns", "a", "haptic"))
	kept := map[string]*libraryCaches{}
	for i, extra := range []string{"live", "webhook", "live", "webhook", "fresh", "live"} {
		in := Input{Snapshot: snap, ExtraContext: map[string]any{"who": extra}, Fresh: extra == "fresh"}
		if _, err := e.Render(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		got := e.st.kept
		if want, ok := kept[extra]; ok && got != want {
			t.Fatalf("render %d (%s): another extraContext's or a new kept state", i, extra)
		}
		for other, k := range kept {
			if other != extra && k == got {
				t.Fatalf("render %d (%s) kept %s's state", i, extra, other)
			}
		}
		kept[extra] = got
	}
}

// A unit or cached value reused for equal inputs is remembered with the inputs of the
// render that reused it: the next render finds the very same values and compares
// them at once. (Kept with an older render's equal inputs, every later render walked
// them all: 5,000 backends per Ingress change.)
func TestReuseRemembersTheLatestInputs(t *testing.T) {
	spec := testSpec(`global
{% for _, ing := range resources.Ingresses.List() %}
{% var input = map[string]any{"name": ing.Metadata.Name} %}
{% if unit("ing " + ing.Metadata.Name, input) %}# {{ ing.Metadata.Name }}
{% end %}{{ end_unit("ing " + ing.Metadata.Name) }}
{% var v, ok = cached("v " + ing.Metadata.Name, input) %}{% if !ok %}{% v = end_cached("v " + ing.Metadata.Name, ing.Metadata.Name) %}{% end %}
{% end %}
`)
	e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := ingress("ns", "a", "haptic"), ingress("ns", "b", "haptic")
	inputs := func() (unit, value uintptr) {
		t.Helper()
		if len(e.memos) != 1 {
			t.Fatalf("%d memos, want 1", len(e.memos))
		}
		u, v := e.memos[0].unit("haproxy.cfg", "ing a"), e.memos[0].value("haproxy.cfg", "v a")
		if u == nil || v == nil {
			t.Fatal("unit or value of a not memoized")
		}
		return reflect.ValueOf(u.inputs[0]).Pointer(), reflect.ValueOf(v.inputs[0]).Pointer()
	}
	if _, err := e.Render(context.Background(), Input{Snapshot: testSnapshot(a)}); err != nil {
		t.Fatal(err)
	}
	unit1, value1 := inputs()
	// b makes the file render again; a's unit and value are reused for an equal map
	res, err := e.Render(context.Background(), Input{Snapshot: testSnapshot(a, b)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reuse.Units != 2 {
		t.Fatalf("reused %d units and values, want a's 2: %+v", res.Reuse.Units, res.Reuse)
	}
	unit2, value2 := inputs()
	if unit2 == unit1 || value2 == value1 {
		t.Errorf("the memo kept the first render's inputs (unit %v, value %v)", unit2 == unit1, value2 == value1)
	}
}

// TestKeyListHasItsKeys: a key list built from keys with repeats, and from other
// lists, has each key once and no other.
func TestKeyListHasItsKeys(t *testing.T) {
	var a, b keyBuilder
	for i := range 300 {
		a.add(fmt.Sprintf("4:ns%02d5:key%02d", i%50%7, i%50))
	}
	b.addList(a.list())
	b.add("")
	l := b.list()
	if len(l.keys) != 51 { // 50 distinct keys, and ""
		t.Fatalf("%d keys, want 51", len(l.keys))
	}
	for i := range 50 {
		if k := fmt.Sprintf("4:ns%02d5:key%02d", i%7, i); !l.has(k) {
			t.Errorf("%q missing", k)
		}
	}
	for _, k := range []string{"4:ns015:key07", "x", "4:ns015:key00"} {
		if l.has(k) {
			t.Errorf("%q found", k)
		}
	}
	if !l.has("") || !slices.IsSorted(l.sums) {
		t.Errorf("list %v not ordered by hash, or without \"\"", l.sums)
	}
}

// A shared value is kept, with what its factory memoized, while a file that asked
// for it is reused (its template does not run to ask again), and dropped once no
// file asks for it: a key made from an object's name does not outlive the object.
func TestSharedValuesKeptWhileAFileUsesThem(t *testing.T) {
	spec := testSpec("global\n# {{ len(resources.Ingresses.List()) }}")
	spec.Maps = map[string]v1alpha1.GeneratedFile{"a.map": {Template: `{% for _, i := range resources.Ingresses.Fetch("web") %}` +
		`{% var v, _ = shared.ComputeIfAbsent("k-" + i.Metadata.Name, func() any { return i.Metadata.Name }) %}{{ v }} x{% end %}`}}
	e, err := Compile(spec, Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	kept := func(key string) bool {
		t.Helper()
		if len(e.memos) != 1 {
			t.Fatalf("%d memos, want 1", len(e.memos))
		}
		return e.memos[0].sharedValue(key) != nil
	}
	one, two, three := ingress("web", "one", "x"), ingress("other", "two", "x"), ingress("web", "three", "x")
	for i, c := range []struct {
		snap       *snapshot.Snapshot
		mapReused  bool
		kept, gone string
	}{
		{testSnapshot(one), false, "k-one", ""},
		// another namespace's Ingress: haproxy.cfg renders, a.map is reused
		{testSnapshot(two, one), true, "k-one", ""},
		// web's Ingress renamed: a.map renders and asks for another key
		{testSnapshot(two, three), false, "k-three", "k-one"},
	} {
		res, err := e.Render(context.Background(), Input{Snapshot: c.snap})
		if err != nil {
			t.Fatal(err)
		}
		if reused := res.Reuse.Files == 1; reused != c.mapReused {
			t.Fatalf("render %d: %d files reused, want a.map reused: %v", i, res.Reuse.Files, c.mapReused)
		}
		if !kept(c.kept) {
			t.Errorf("render %d: %s not kept", i, c.kept)
		}
		if c.gone != "" && kept(c.gone) {
			t.Errorf("render %d: %s kept, though no file asks for it", i, c.gone)
		}
	}
}
