package snapshot

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/fieldpath"
)

func obj(ns, name string, labels map[string]any) Object {
	meta := map[string]any{"name": name}
	if ns != "" {
		meta["namespace"] = ns
	}
	if labels != nil {
		meta["labels"] = labels
	}
	return Object{Namespace: ns, Name: name, Raw: map[string]any{"metadata": meta}}
}

func keys(objs []Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Key()
	}
	return out
}

func paths(ss ...string) []fieldpath.Path {
	var out []fieldpath.Path
	for _, s := range ss {
		out = append(out, fieldpath.MustParse(s))
	}
	return out
}

func TestNewStoreSorts(t *testing.T) {
	in := []Object{
		obj("b", "x", nil),
		obj("a", "z", nil),
		obj("", "cluster", nil),
		obj("a", "b", nil),
		obj("b", "a", nil),
	}
	orig := keys(in)
	s := NewStore("things", nil, nil, in)
	want := []string{"cluster", "a/b", "a/z", "b/a", "b/x"}
	if got := keys(s.List()); !slices.Equal(got, want) {
		t.Errorf("List() = %v, want %v", got, want)
	}
	if s.Len() != len(in) {
		t.Errorf("Len() = %d, want %d", s.Len(), len(in))
	}
	if got := keys(in); !slices.Equal(got, orig) {
		t.Errorf("NewStore reordered its input: %v, was %v", got, orig)
	}
	if s.Name != "things" {
		t.Errorf("Name = %q", s.Name)
	}
}

func TestNewStoreEmpty(t *testing.T) {
	s := NewStore("empty", nil, nil, nil)
	if s.Len() != 0 || len(s.List()) != 0 {
		t.Fatalf("empty store has %d objects", s.Len())
	}
	for _, k := range [][]string{nil, {"a"}, {"a", "b"}} {
		got, err := s.Fetch(k...)
		if err != nil || len(got) != 0 {
			t.Errorf("Fetch(%v) = %v, %v; want nothing", k, keys(got), err)
		}
		o, ok, err := s.GetSingle(k...)
		if err != nil || ok || o.Name != "" {
			t.Errorf("GetSingle(%v) = %v, %v, %v; want not found", k, o.Key(), ok, err)
		}
	}
}

// endpointSlices are indexed by service name label, then namespace.
func endpointSlices() *Store {
	return NewStore("endpoints", paths("metadata.labels['kubernetes.io/service-name']", "metadata.namespace"), nil, []Object{
		obj("prod", "web-2", map[string]any{"kubernetes.io/service-name": "web"}),
		obj("prod", "web-1", map[string]any{"kubernetes.io/service-name": "web"}),
		obj("dev", "web-1", map[string]any{"kubernetes.io/service-name": "web"}),
		obj("prod", "api-1", map[string]any{"kubernetes.io/service-name": "api"}),
		obj("prod", "orphan", nil),
	})
}

func TestFetchIndexBy(t *testing.T) {
	s := endpointSlices()
	tests := []struct {
		keys []string
		want []string
	}{
		{nil, []string{"dev/web-1", "prod/api-1", "prod/orphan", "prod/web-1", "prod/web-2"}},
		{[]string{"web"}, []string{"dev/web-1", "prod/web-1", "prod/web-2"}},
		{[]string{"api"}, []string{"prod/api-1"}},
		{[]string{"web", "prod"}, []string{"prod/web-1", "prod/web-2"}},
		{[]string{"web", "dev"}, []string{"dev/web-1"}},
		{[]string{"api", "dev"}, nil},
		{[]string{"nope"}, nil},
		{[]string{"prod"}, nil},                 // namespace is the second index, not the first
		{[]string{"web", "prod", "x"}, nil},     // more keys than index paths
		{[]string{""}, []string{"prod/orphan"}}, // absent label indexes as ""
		{[]string{"", "prod"}, []string{"prod/orphan"}},
		// keys must not be joined in a way that lets one key stand for two
		{[]string{"web\x00prod"}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.keys, ","), func(t *testing.T) {
			got, err := s.Fetch(tt.keys...)
			if err != nil {
				t.Fatal(err)
			}
			if g := keys(got); !slices.Equal(g, tt.want) && !(len(g) == 0 && len(tt.want) == 0) {
				t.Errorf("Fetch(%q) = %v, want %v", tt.keys, g, tt.want)
			}
			got, err = s.FetchIndexed(tt.keys, IndexKey(tt.keys))
			if g := keys(got); err != nil || !slices.Equal(g, tt.want) && !(len(g) == 0 && len(tt.want) == 0) {
				t.Errorf("FetchIndexed(%q) = %v, %v; want %v", tt.keys, g, err, tt.want)
			}
		})
	}
}

func TestFetchDefaultIndex(t *testing.T) {
	s := NewStore("services", nil, nil, []Object{
		obj("prod", "web", nil),
		obj("prod", "api", nil),
		obj("dev", "web", nil),
		obj("", "global", nil),
	})
	tests := []struct {
		keys []string
		want []string
	}{
		{[]string{"prod"}, []string{"prod/api", "prod/web"}},
		{[]string{"prod", "web"}, []string{"prod/web"}},
		{[]string{"dev", "web"}, []string{"dev/web"}},
		{[]string{"dev", "api"}, nil},
		{[]string{"web"}, nil}, // first key is the namespace
		{[]string{"", "global"}, []string{"global"}},
	}
	for _, tt := range tests {
		got, err := s.Fetch(tt.keys...)
		if err != nil {
			t.Fatal(err)
		}
		if g := keys(got); !slices.Equal(g, tt.want) && !(len(g) == 0 && len(tt.want) == 0) {
			t.Errorf("Fetch(%q) = %v, want %v", tt.keys, g, tt.want)
		}
	}
}

func TestFetchIndexUsesRawNotFields(t *testing.T) {
	// The default index reads metadata from Raw, not Object.Namespace/Name.
	o := Object{Namespace: "ns", Name: "n", Raw: map[string]any{"metadata": map[string]any{"namespace": "raw-ns", "name": "raw-n"}}}
	s := NewStore("x", nil, nil, []Object{o})
	if got, _ := s.Fetch("raw-ns", "raw-n"); len(got) != 1 {
		t.Errorf("Fetch(raw-ns, raw-n) = %v, want the object", keys(got))
	}
}

func TestFetchNumericIndex(t *testing.T) {
	mk := func(name string, port any) Object {
		return Object{Namespace: "ns", Name: name, Raw: map[string]any{"spec": map[string]any{"port": port}}}
	}
	s := NewStore("svc", paths("spec.port"), nil, []Object{mk("a", float64(80)), mk("b", float64(443)), mk("c", "80")})
	got, err := s.Fetch("80")
	if err != nil {
		t.Fatal(err)
	}
	if g := keys(got); !slices.Equal(g, []string{"ns/a", "ns/c"}) {
		t.Errorf("Fetch(80) = %v, want [ns/a ns/c]", g)
	}
}

func TestGetSingle(t *testing.T) {
	s := endpointSlices()
	tests := []struct {
		keys    []string
		want    string
		wantOK  bool
		wantErr bool
	}{
		{keys: []string{"api"}, want: "prod/api-1", wantOK: true},
		{keys: []string{"web", "dev"}, want: "dev/web-1", wantOK: true},
		{keys: []string{"nope"}},
		{keys: []string{"web"}, wantErr: true},
		{keys: []string{"web", "prod"}, wantErr: true},
		{keys: nil, wantErr: true}, // every object matches
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.keys, ","), func(t *testing.T) {
			o, ok, err := s.GetSingle(tt.keys...)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("GetSingle(%q) = %v, %v; want error", tt.keys, o.Key(), ok)
				}
				if !strings.Contains(err.Error(), "endpoints") || !strings.Contains(err.Error(), "at most one") {
					t.Errorf("GetSingle(%q) error %q should name the store and the ambiguity", tt.keys, err)
				}
				if ok {
					t.Error("GetSingle returned ok=true with an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("GetSingle(%q): %v", tt.keys, err)
			}
			if ok != tt.wantOK || (ok && o.Key() != tt.want) {
				t.Errorf("GetSingle(%q) = %q, %v; want %q, %v", tt.keys, o.Key(), ok, tt.want, tt.wantOK)
			}
		})
	}
}

type fakeLoader struct {
	calls [][]string
	objs  []Object
	err   error
}

func (f *fakeLoader) Fetch(keys ...string) ([]Object, error) {
	f.calls = append(f.calls, append([]string(nil), keys...))
	if f.err != nil {
		return nil, f.err
	}
	return f.objs, nil
}

func TestOnDemand(t *testing.T) {
	held := []Object{obj("ns", "held", nil)}

	t.Run("fetch goes to the loader", func(t *testing.T) {
		l := &fakeLoader{objs: []Object{obj("ns", "loaded", nil)}}
		s := NewStore("secrets", nil, nil, held)
		s.OnDemand = l
		for _, k := range [][]string{nil, {"ns"}, {"ns", "loaded"}} {
			got, err := s.Fetch(k...)
			if err != nil {
				t.Fatal(err)
			}
			if g := keys(got); !slices.Equal(g, []string{"ns/loaded"}) {
				t.Errorf("Fetch(%q) = %v, want the loader's objects", k, g)
			}
		}
		if want := [][]string{{}, {"ns"}, {"ns", "loaded"}}; len(l.calls) != 3 || !slices.Equal(l.calls[1], want[1]) || !slices.Equal(l.calls[2], want[2]) || len(l.calls[0]) != 0 {
			t.Errorf("loader calls = %q, want %q", l.calls, want)
		}
	})

	t.Run("get single via loader", func(t *testing.T) {
		l := &fakeLoader{objs: []Object{obj("ns", "one", nil)}}
		s := NewStore("secrets", nil, nil, nil)
		s.OnDemand = l
		o, ok, err := s.GetSingle("ns", "one")
		if err != nil || !ok || o.Key() != "ns/one" {
			t.Errorf("GetSingle = %q, %v, %v; want ns/one", o.Key(), ok, err)
		}
		l.objs = append(l.objs, obj("ns", "two", nil))
		if _, _, err := s.GetSingle("ns"); err == nil {
			t.Error("GetSingle with two loaded objects gave no error")
		}
	})

	t.Run("loader error is wrapped", func(t *testing.T) {
		sentinel := errors.New("apiserver down")
		s := NewStore("secrets", nil, nil, held)
		s.OnDemand = &fakeLoader{err: sentinel}
		got, err := s.Fetch("ns", "x")
		if !errors.Is(err, sentinel) {
			t.Fatalf("Fetch error = %v, want it to wrap %v", err, sentinel)
		}
		if got != nil {
			t.Errorf("Fetch returned objects with an error: %v", keys(got))
		}
		for _, want := range []string{"secrets", "ns", "x"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Fetch error %q does not mention %q", err, want)
			}
		}
		_, ok, err := s.GetSingle("ns", "x")
		if !errors.Is(err, sentinel) || ok {
			t.Errorf("GetSingle = %v, %v; want the wrapped loader error", ok, err)
		}
	})
}

func TestSnapshotNames(t *testing.T) {
	snap := &Snapshot{Stores: map[string]*Store{
		"services":  NewStore("services", nil, nil, nil),
		"ingresses": NewStore("ingresses", nil, nil, nil),
		"Secrets":   NewStore("Secrets", nil, nil, nil),
		"endpoints": NewStore("endpoints", nil, nil, nil),
	}}
	want := []string{"Secrets", "endpoints", "ingresses", "services"}
	if got := snap.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got := (&Snapshot{}).Names(); len(got) != 0 {
		t.Errorf("empty snapshot Names() = %v", got)
	}
}

func TestObjectKey(t *testing.T) {
	tests := []struct {
		o    Object
		want string
	}{
		{Object{Namespace: "ns", Name: "n"}, "ns/n"},
		{Object{Name: "cluster-scoped"}, "cluster-scoped"},
		{Object{}, ""},
	}
	for _, tt := range tests {
		if got := tt.o.Key(); got != tt.want {
			t.Errorf("%+v.Key() = %q, want %q", tt.o, got, tt.want)
		}
	}
}

func TestStoreKeepsType(t *testing.T) {
	type spec struct{ X string }
	typ := reflect.TypeOf(spec{})
	v := reflect.New(typ)
	v.Elem().Field(0).SetString("x")
	s := NewStore("t", nil, typ, []Object{{Name: "a", Convert: func(map[string]any) (reflect.Value, error) { return v, nil }}})
	if s.Type != typ {
		t.Errorf("Type = %v, want %v", s.Type, typ)
	}
	if got := s.List()[0].TypedValue().Elem().Field(0).String(); got != "x" {
		t.Errorf("typed value not kept: %q", got)
	}
}

func TestIndexKeysAreUnambiguous(t *testing.T) {
	// Index values may hold any bytes (they come from object fields); splitting them
	// differently must never match another object.
	mk := func(name, a, b string) Object {
		return Object{Name: name, Raw: map[string]any{"a": a, "b": b}}
	}
	s := NewStore("x", paths("a", "b"), nil, []Object{
		mk("one", "p\x00q", "r"),
		mk("two", "p", "q\x00r"),
		mk("three", "p:q", "r"),
		mk("four", "1:p", "r"),
	})
	tests := []struct {
		keys []string
		want []string
	}{
		{[]string{"p\x00q", "r"}, []string{"one"}},
		{[]string{"p", "q\x00r"}, []string{"two"}},
		{[]string{"p"}, []string{"two"}},
		{[]string{"p\x00q\x00r"}, nil},
		{[]string{"p:q", "r"}, []string{"three"}},
		{[]string{"1:p", "r"}, []string{"four"}},
		{[]string{"1:p1:r"}, nil},
	}
	for _, tt := range tests {
		got, err := s.Fetch(tt.keys...)
		if err != nil {
			t.Fatal(err)
		}
		if g := keys(got); !slices.Equal(g, tt.want) && !(len(g) == 0 && len(tt.want) == 0) {
			t.Errorf("Fetch(%q) = %v, want %v", tt.keys, g, tt.want)
		}
	}
}

// Changes names exactly the index keys whose Fetch answers differ between two stores:
// those of added, removed and replaced objects, every prefix, and "" (everything).
func TestChanges(t *testing.T) {
	by := paths("metadata.namespace", "metadata.labels.app")
	a, b, c := obj("ns", "a", map[string]any{"app": "x"}), obj("ns", "b", map[string]any{"app": "y"}), obj("other", "c", map[string]any{"app": "x"})
	old := NewStore("s", by, nil, []Object{a, b, c})
	b2 := obj("ns", "b", map[string]any{"app": "z"}) // a new version of b, under another label
	d := obj("zz", "d", map[string]any{"app": "x"})
	now := NewStore("s", by, nil, []Object{a, b2, d}) // c removed, d added
	got := now.Changes(old)
	want := map[string]bool{"": true,
		IndexKey([]string{"ns"}): true, IndexKey([]string{"ns", "y"}): true, IndexKey([]string{"ns", "z"}): true,
		IndexKey([]string{"other"}): true, IndexKey([]string{"other", "x"}): true,
		IndexKey([]string{"zz"}): true, IndexKey([]string{"zz", "x"}): true}
	if len(got) != len(want) {
		t.Errorf("Changes = %v, want %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("Changes lacks %q", k)
		}
	}
	if got[IndexKey([]string{"ns", "x"})] {
		t.Error("a, unchanged, is reported changed")
	}
	if n := len(NewStore("s", by, nil, []Object{a, b, c}).Changes(old)); n != 0 {
		t.Errorf("the same objects in a new store: %d changed keys, want 0", n)
	}
}

// TestWithIsNewStore: a store made With changes is the store NewStore makes of the
// resulting objects (order, index, refused objects), whatever the changes.
func TestWithIsNewStore(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	by := paths("metadata.namespace", "metadata.labels.app")
	random := func() Object {
		o := obj(fmt.Sprintf("ns%d", rng.IntN(3)), fmt.Sprintf("o%d", rng.IntN(30)), map[string]any{"app": fmt.Sprintf("a%d", rng.IntN(4))})
		if rng.IntN(6) == 0 {
			o.Refused = "metadata.name: refused"
		}
		return o
	}
	held := map[string]Object{}
	st := NewStore("r", by, nil, nil)
	for step := range 2000 {
		put, drop := randomChange(rng, random)
		if len(st.objects) > 0 && rng.IntN(3) == 0 { // a version put again: no change
			put = append(put, st.objects[rng.IntN(len(st.objects))])
		}
		for _, k := range drop {
			delete(held, k)
		}
		// a key both dropped and put again in one change keeps the put object
		for _, o := range put {
			held[o.Key()] = o
		}
		prev := st
		st = st.With(put, drop)
		checkEdits(t, fmt.Sprintf("step %d", step), prev, st)
		want := NewStore("r", by, nil, slices.Collect(maps.Values(held)))
		if !reflect.DeepEqual(keys(st.objects), keys(want.objects)) || !reflect.DeepEqual(keys(st.refused), keys(want.refused)) ||
			!reflect.DeepEqual(indexed(st.index), indexed(want.index)) {
			t.Fatalf("step %d: With gives %v %v %v, NewStore %v %v %v", step, keys(st.objects), keys(st.refused), indexed(st.index),
				keys(want.objects), keys(want.refused), indexed(want.index))
		}
		for _, q := range [][]string{{}, {"ns1"}, {"ns9"}, {"ns2", "a1"}, {"ns0", "a3"}, {"ns1", "a0", "x"}} {
			got, _ := st.Fetch(q...)
			wantGot, _ := want.Fetch(q...)
			if !slices.Equal(keys(got), keys(wantGot)) {
				t.Fatalf("step %d: With's Fetch(%q) = %v, NewStore's %v", step, q, keys(got), keys(wantGot))
			}
		}
		if got := st.Keys(); !slices.Equal(got, keys(want.objects)) {
			t.Fatalf("step %d: With's Keys %v, want %v", step, got, keys(want.objects))
		}
	}
}

// TestKeyOrderedFetchIsIndexFetch: a store indexed by namespace and name answers
// Fetch from its sort order exactly as the index map answers (over random puts and
// drops, cluster-scoped objects, missing keys and too many keys), and an object
// whose metadata disagrees with its key makes the store build the map.
func TestKeyOrderedFetchIsIndexFetch(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	random := func() Object {
		ns := fmt.Sprintf("ns%d", rng.IntN(4))
		if rng.IntN(5) == 0 {
			ns = "" // cluster-scoped
		}
		return obj(ns, fmt.Sprintf("o%d", rng.IntN(20)), nil)
	}
	for _, by := range [][]fieldpath.Path{nil, paths("metadata.namespace", "metadata.name")} {
		st := NewStore("r", by, nil, nil)
		for step := range 1500 {
			st = st.With(randomChange(rng, random))
			if !st.keyOrdered || st.index != nil {
				t.Fatalf("step %d: a store indexed by namespace and name built an index map", step)
			}
			mapped := &Store{Name: st.Name, IndexBy: st.IndexBy, objects: st.objects, keys: st.keys}
			mapped.index = newObjectIndex(mapped.objects, mapped.fullKey)
			queries := [][]string{{}, {"ns9"}, {""}, {"ns1", "o3", "x"}, {"", "o1"}}
			for range 6 {
				o := random()
				queries = append(queries, []string{o.Namespace}, []string{o.Namespace, o.Name})
			}
			for _, q := range queries {
				got, _ := st.Fetch(q...)
				want, _ := mapped.Fetch(q...)
				if !reflect.DeepEqual(keys(got), keys(want)) {
					t.Fatalf("step %d: Fetch(%q) = %v, the index map gives %v", step, q, keys(got), keys(want))
				}
			}
		}
	}
	odd := obj("a", "x", nil)
	odd.Name = "y" // metadata says x
	st := NewStore("r", nil, nil, []Object{obj("a", "b", nil)}).With([]Object{odd}, nil)
	if got, _ := st.Fetch("a", "x"); st.keyOrdered || len(got) != 1 || got[0].Name != "y" {
		t.Fatalf("an object indexed by its metadata, not its key: keyOrdered %v, Fetch %v", st.keyOrdered, keys(got))
	}
}

// randomChange is up to three objects put or keys dropped, for Store.With.
func randomChange(rng *rand.Rand, random func() Object) (put []Object, drop []string) {
	for range rng.IntN(4) {
		if o := random(); rng.IntN(3) > 0 {
			put = append(put, o)
		} else {
			drop = append(drop, o.Key())
		}
	}
	return put, drop
}

// checkEdits: the edits a store keeps of the store it was made from are what
// DiffObjects finds between the two, either way round.
func checkEdits(t *testing.T, at string, base, made *Store) {
	t.Helper()
	for _, c := range []struct{ from, to *Store }{{base, made}, {made, base}} {
		gone, came := c.to.Diff(c.from)
		wantGone, wantCame := DiffObjects(c.from.objects, c.to.objects)
		if !slices.Equal(keys(gone), keys(wantGone)) || !slices.Equal(keys(came), keys(wantCame)) ||
			!slices.EqualFunc(gone, wantGone, Object.SameVersion) || !slices.EqualFunc(came, wantCame, Object.SameVersion) {
			t.Fatalf("%s: edits gone %v came %v, DiffObjects %v %v", at, keys(gone), keys(came), keys(wantGone), keys(wantCame))
		}
	}
}

// TestRevertKeepsEdits: a snapshot reverted to other versions of a few objects keeps
// them as the edits of its stores.
func TestRevertKeepsEdits(t *testing.T) {
	by := paths("metadata.namespace", "metadata.name")
	a, b, c := obj("ns", "a", nil), obj("ns", "b", nil), obj("ns", "c", nil)
	b2, d := obj("ns", "b", map[string]any{"v": "2"}), obj("ns", "d", nil)
	now := &Snapshot{Stores: map[string]*Store{"s": NewStore("s", by, nil, []Object{a, b, c})}}
	prev := &Snapshot{Stores: map[string]*Store{"s": NewStore("s", by, nil, []Object{b2, d})}}
	got := now.Revert(prev, Ref{"s", "ns/b"}, Ref{"s", "ns/c"}, Ref{"s", "ns/d"}, Ref{"s", "ns/a"}, Ref{"s", "ns/a"})
	if got.Stores["s"].base.Value() != now.Stores["s"] {
		t.Fatal("the reverted store does not know the store it was made from")
	}
	checkEdits(t, "revert", now.Stores["s"], got.Stores["s"])
	checkEdits(t, "revert back", got.Stores["s"], got.Revert(now, Ref{"s", "ns/a"}).Stores["s"])
	again := got.Revert(got, Ref{"s", "ns/b"}) // b as it is: no edit
	if g, c := again.Stores["s"].Diff(got.Stores["s"]); len(g)+len(c) != 0 {
		t.Errorf("reverting to the same version: edits %v %v", keys(g), keys(c))
	}
}

// indexed is an index as its keys and the keys of the objects under each.
func indexed(x *objectIndex) map[string][]string {
	if x == nil {
		return nil
	}
	out := map[string][]string{}
	for _, shard := range x.shards {
		for k, objs := range shard {
			out[k] = keys(objs)
		}
	}
	return out
}

// TestKeysOfInvertsIndexKey: KeysOf gives back the keys IndexKey encoded, whatever
// bytes they hold, and nil for a string that is no encoding.
func TestKeysOfInvertsIndexKey(t *testing.T) {
	for _, keys := range [][]string{nil, {""}, {"a"}, {"ns", "name"}, {"1:x", "", "a:b:c", "\x00\n"}, {strings.Repeat("z", 300), "é"}} {
		if got := KeysOf(IndexKey(keys)); !slices.Equal(got, keys) {
			t.Errorf("KeysOf(IndexKey(%q)) = %q", keys, got)
		}
	}
	for _, bad := range []string{"x", "3:ab", "-1:", "2", ":a"} {
		if got := KeysOf(bad); got != nil {
			t.Errorf("KeysOf(%q) = %q, want nil", bad, got)
		}
	}
}
