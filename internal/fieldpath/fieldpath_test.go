package fieldpath

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func key(k string) Step { return Step{Key: k, IsKey: true} }
func idx(i int) Step    { return Step{Index: i} }

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    []Step
		wantErr string // substring; empty means success
	}{
		{in: "metadata.name", want: []Step{key("metadata"), key("name")}},
		{in: "a", want: []Step{key("a")}},
		{in: "$.metadata.name", want: []Step{key("metadata"), key("name")}},
		{in: ".metadata.name", want: []Step{key("metadata"), key("name")}},
		{in: "{.metadata.name}", want: []Step{key("metadata"), key("name")}},
		{in: "{$.metadata.name}", want: []Step{key("metadata"), key("name")}},
		{in: "  spec.x  ", want: []Step{key("spec"), key("x")}},
		{in: "$['a']", want: []Step{key("a")}},
		{
			in:   "metadata.labels['kubernetes.io/service-name']",
			want: []Step{key("metadata"), key("labels"), key("kubernetes.io/service-name")},
		},
		{
			in:   `metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]`,
			want: []Step{key("metadata"), key("annotations"), key("kubectl.kubernetes.io/last-applied-configuration")},
		},
		{in: `a[ 'b' ]`, want: []Step{key("a"), key("b")}},
		{in: `a['']`, want: []Step{key("a"), key("")}},
		{in: "spec.rules[0].host", want: []Step{key("spec"), key("rules"), idx(0), key("host")}},
		{in: "a[12][3]", want: []Step{key("a"), idx(12), idx(3)}},
		{in: "[0]", want: []Step{idx(0)}},
		{in: "a['x'].b['y.z'][1]", want: []Step{key("a"), key("x"), key("b"), key("y.z"), idx(1)}},

		{in: "", wantErr: "empty"},
		{in: "   ", wantErr: "empty"},
		{in: "$", wantErr: "empty"},
		{in: "$.", wantErr: "empty"},
		{in: "{}", wantErr: "empty"},
		{in: ".", wantErr: "empty"},
		{in: "a[0", wantErr: "unclosed"},
		{in: "a['b'", wantErr: "unclosed"},
		{in: "[", wantErr: "unclosed"},
		{in: "a[x]", wantErr: "neither a quoted key nor a list index"},
		{in: "a[-1]", wantErr: "neither"},
		{in: "a[]", wantErr: "neither"},
		{in: "a[1.5]", wantErr: "neither"},
		{in: `a['b"]`, wantErr: "neither"}, // mismatched quotes
		{in: `a[']`, wantErr: "neither"},   // a lone quote is not a quoted key
		{in: "a[99999999999999999999999]", wantErr: "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Parse(%q) = %+v, want error containing %q", tt.in, p.Steps, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error %q, want it to contain %q", tt.in, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), strconv.Quote(tt.in)) {
					t.Errorf("Parse(%q) error %q does not quote the path", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(p.Steps, tt.want) {
				t.Errorf("Parse(%q).Steps = %+v, want %+v", tt.in, p.Steps, tt.want)
			}
			if p.Source != tt.in {
				t.Errorf("Parse(%q).Source = %q, want the input", tt.in, p.Source)
			}
		})
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MustParse(\"a[\") did not panic")
		}
	}()
	MustParse("a[")
}

func doc(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	err := json.Unmarshal([]byte(`{
		"metadata": {
			"name": "web",
			"namespace": "prod",
			"labels": {"kubernetes.io/service-name": "svc", "app": "web"},
			"generation": 3
		},
		"spec": {
			"rules": [
				{"host": "a.example.com", "paths": [{"path": "/"}, {"path": "/api"}]},
				{"host": "b.example.com"}
			],
			"replicas": 2,
			"ratio": 0.25,
			"big": 1e21,
			"enabled": true,
			"off": false,
			"nothing": null,
			"empty": ""
		}
	}`), &m)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGet(t *testing.T) {
	d := doc(t)
	tests := []struct {
		path   string
		want   any
		wantOK bool
	}{
		{"metadata.name", "web", true},
		{"$.metadata.namespace", "prod", true},
		{"metadata.labels['kubernetes.io/service-name']", "svc", true},
		{`metadata.labels["app"]`, "web", true},
		{"spec.rules[0].host", "a.example.com", true},
		{"spec.rules[1].host", "b.example.com", true},
		{"spec.rules[0].paths[1].path", "/api", true},
		{"spec.rules[2].host", nil, false},  // index out of range
		{"spec.rules.host", nil, false},     // key step on a list
		{"spec[0]", nil, false},             // index step on a map
		{"metadata.name.first", nil, false}, // step below a scalar
		{"metadata.missing", nil, false},    // absent key
		{"missing.deeper", nil, false},      // absent parent
		{"spec.nothing", nil, true},         // present null
		{"spec.nothing.x", nil, false},      // below null
		{"spec.replicas", float64(2), true}, // JSON numbers decode as float64
		{"spec.enabled", true, true},        // bool
		{"metadata.labels['missing']", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, ok := MustParse(tt.path).Get(d)
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Get(%q) = %#v, %v; want %#v, %v", tt.path, got, ok, tt.want, tt.wantOK)
			}
		})
	}

	t.Run("subtree", func(t *testing.T) {
		got, ok := MustParse("spec.rules[0]").Get(d)
		m, isMap := got.(map[string]any)
		if !ok || !isMap || m["host"] != "a.example.com" {
			t.Errorf("Get(spec.rules[0]) = %#v, %v; want the first rule", got, ok)
		}
	})
	t.Run("non-JSON containers", func(t *testing.T) {
		// Only decoded JSON shapes are walked.
		if _, ok := MustParse("a").Get(map[string]string{"a": "b"}); ok {
			t.Error("Get walked into a map[string]string")
		}
		if _, ok := MustParse("[0]").Get([]string{"a"}); ok {
			t.Error("Get walked into a []string")
		}
		if _, ok := MustParse("a").Get(nil); ok {
			t.Error("Get on nil reported a value")
		}
	})
	t.Run("top-level list", func(t *testing.T) {
		got, ok := MustParse("[1].x").Get([]any{map[string]any{"x": 1.0}, map[string]any{"x": 2.0}})
		if !ok || got != 2.0 {
			t.Errorf("Get([1].x) = %v, %v; want 2, true", got, ok)
		}
	})
}

func TestGetString(t *testing.T) {
	d := doc(t)
	d["typed"] = map[string]any{"int": 42, "int64": int64(-7), "slice": []any{"x"}}
	tests := []struct {
		path, want string
	}{
		{"metadata.name", "web"},
		{"metadata.generation", "3"}, // float64 without a fraction prints as an integer
		{"spec.replicas", "2"},
		{"spec.ratio", "0.25"},
		{"spec.big", "1000000000000000000000"}, // never exponent notation
		{"spec.enabled", "true"},
		{"spec.off", "false"},
		{"spec.nothing", ""}, // null
		{"spec.empty", ""},
		{"spec.missing", ""},
		{"typed.int", "42"},
		{"typed.int64", "-7"},
		{"typed.slice", "[x]"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := MustParse(tt.path).GetString(d); got != tt.want {
				t.Errorf("GetString(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"s", "s"},
		{float64(80), "80"},
		{float64(-1.5), "-1.5"},
		{float64(0), "0"},
		{float64(1e-7), "0.0000001"},
		{int(443), "443"},
		{int64(1) << 40, "1099511627776"},
		{true, "true"},
		{false, "false"},
		{uint8(9), "9"},
	}
	for _, tt := range tests {
		if got := Format(tt.in); got != tt.want {
			t.Errorf("Format(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name string
		path string
		// check is the path that must be absent afterwards (empty: nothing removed)
		gone string
		// keep are paths that must still be present
		keep []string
	}{
		{
			name: "present top-level key",
			path: "spec",
			gone: "spec",
			keep: []string{"metadata.name"},
		},
		{
			name: "nested key",
			path: "metadata.labels['kubernetes.io/service-name']",
			gone: "metadata.labels['kubernetes.io/service-name']",
			keep: []string{"metadata.labels.app", "metadata.name"},
		},
		{
			name: "key below a list element",
			path: "spec.rules[0].host",
			gone: "spec.rules[0].host",
			keep: []string{"spec.rules[0].paths", "spec.rules[1].host"},
		},
		{
			name: "missing key",
			path: "metadata.nope",
			keep: []string{"metadata.name", "metadata.labels.app"},
		},
		{
			name: "missing parent",
			path: "status.conditions",
			keep: []string{"metadata.name", "spec.replicas"},
		},
		{
			name: "last step is an index: no-op",
			path: "spec.rules[0]",
			keep: []string{"spec.rules[0].host", "spec.rules[1].host"},
		},
		{
			name: "index out of range: no-op",
			path: "spec.rules[5].host",
			keep: []string{"spec.rules[0].host", "spec.rules[1].host"},
		},
		{
			name: "parent is a scalar: no-op",
			path: "metadata.name.x",
			keep: []string{"metadata.name"},
		},
		{
			name: "key step into a list: no-op",
			path: "spec.rules.host",
			keep: []string{"spec.rules[0].host"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := doc(t)
			before := countLeaves(d)
			MustParse(tt.path).Delete(d)
			if tt.gone != "" {
				if v, ok := MustParse(tt.gone).Get(d); ok {
					t.Errorf("after Delete(%q), %q = %v is still present", tt.path, tt.gone, v)
				}
			} else if after := countLeaves(d); after != before {
				t.Errorf("Delete(%q) changed the document: %d leaves before, %d after", tt.path, before, after)
			}
			for _, k := range tt.keep {
				if _, ok := MustParse(k).Get(d); !ok {
					t.Errorf("after Delete(%q), %q is gone", tt.path, k)
				}
			}
		})
	}
	t.Run("non-map root", func(t *testing.T) {
		MustParse("a").Delete(nil)
		MustParse("a.b").Delete([]any{1})
		l := []any{"x"}
		MustParse("[0]").Delete(l)
		if l[0] != "x" {
			t.Error("Delete modified a list element")
		}
	})
}

func countLeaves(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range x {
			n += countLeaves(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += countLeaves(e)
		}
		return n
	default:
		return 1
	}
}

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in        string
		wantNil   bool
		wantPath  []Step
		wantValue string
		wantErr   string
	}{
		{in: "", wantNil: true},
		{in: "   ", wantNil: true},
		{in: "spec.ingressClassName=haproxy", wantPath: []Step{key("spec"), key("ingressClassName")}, wantValue: "haproxy"},
		{in: "spec.ingressClassName==haproxy", wantPath: []Step{key("spec"), key("ingressClassName")}, wantValue: "haproxy"},
		{in: "metadata.labels['a.b/c']=x=y", wantPath: []Step{key("metadata"), key("labels"), key("a.b/c")}, wantValue: "x=y"},
		{in: "spec.x=", wantPath: []Step{key("spec"), key("x")}, wantValue: ""},
		{in: "$.spec.port=80", wantPath: []Step{key("spec"), key("port")}, wantValue: "80"},
		{in: "spec.x", wantErr: "want path=value"},
		{in: "=x", wantErr: "empty"},
		{in: "a[=x", wantErr: "unclosed"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseSelector(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSelector(%q) = %+v, %v; want error containing %q", tt.in, s, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSelector(%q): %v", tt.in, err)
			}
			if tt.wantNil {
				if s != nil {
					t.Fatalf("ParseSelector(%q) = %+v, want nil", tt.in, s)
				}
				return
			}
			if s == nil {
				t.Fatalf("ParseSelector(%q) = nil", tt.in)
			}
			if !reflect.DeepEqual(s.Path.Steps, tt.wantPath) || s.Value != tt.wantValue {
				t.Errorf("ParseSelector(%q) = %+v %q, want %+v %q", tt.in, s.Path.Steps, s.Value, tt.wantPath, tt.wantValue)
			}
		})
	}
}

func TestSelectorMatches(t *testing.T) {
	d := doc(t)
	tests := []struct {
		sel  string
		obj  any
		want bool
	}{
		{"", d, true},
		{"", nil, true},
		{"metadata.name=web", d, true},
		{"metadata.name=api", d, false},
		{"metadata.namespace==prod", d, true},
		{"metadata.labels['kubernetes.io/service-name']=svc", d, true},
		{"spec.replicas=2", d, true},    // number compared as its formatted string
		{"spec.replicas=2.0", d, false}, // ... not numerically
		{"spec.ratio=0.25", d, true},
		{"spec.enabled=true", d, true},
		{"spec.off=false", d, true},
		{"spec.rules[1].host=b.example.com", d, true},
		{"spec.missing=", d, true}, // absent compares as ""
		{"spec.nothing=", d, true}, // null compares as ""
		{"spec.missing=x", d, false},
		{"metadata.name=web", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			s, err := ParseSelector(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Matches(tt.obj); got != tt.want {
				t.Errorf("ParseSelector(%q).Matches = %v, want %v", tt.sel, got, tt.want)
			}
		})
	}
	t.Run("nil selector", func(t *testing.T) {
		var s *Selector
		if !s.Matches(map[string]any{}) {
			t.Error("nil selector rejected an object")
		}
	})
}

// FuzzParse checks that Parse never panics, that a parsed path is never empty, and
// that Get, GetString and Delete of a parsed path never panic on JSON-ish documents.
func FuzzParse(f *testing.F) {
	docs := []string{
		`{"metadata":{"name":"a","labels":{"kubernetes.io/service-name":"s"}},"spec":{"rules":[{"host":"h"},{"x":[1,2,[3]]}]}}`,
		`[{"a":1},[2,[3,{"b":null}]],"s",true,1.5]`,
		`"scalar"`,
		`null`,
		`{}`,
		`{"":{"":[{"":0}]}}`,
	}
	seeds := []struct{ path, doc string }{
		{"metadata.name", docs[0]},
		{"$.metadata.labels['kubernetes.io/service-name']", docs[0]},
		{`{.spec.rules[1].x[2][0]}`, docs[0]},
		{`metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]`, docs[0]},
		{"[1][1][1].b", docs[1]},
		{"[9999999]", docs[1]},
		{"a[", docs[2]},
		{"a[-1]", docs[3]},
		{"['']['']", docs[5]},
		{"..a..[0]", docs[4]},
		{"$", docs[4]},
		{"{}", docs[4]},
		{"a]b[0]", docs[0]},
		{"[' ']", docs[0]},
	}
	for _, s := range seeds {
		f.Add(s.path, s.doc)
	}
	f.Fuzz(func(t *testing.T, path, js string) {
		p, err := Parse(path)
		if err != nil {
			return
		}
		if len(p.Steps) == 0 {
			t.Fatalf("Parse(%q) succeeded with no steps", path)
		}
		for _, st := range p.Steps {
			if !st.IsKey && st.Index < 0 {
				t.Fatalf("Parse(%q) produced a negative index", path)
			}
		}
		var d any
		if json.Unmarshal([]byte(js), &d) != nil {
			d = map[string]any{"metadata": map[string]any{"name": js}, "list": []any{js, 1.0, nil}}
		}
		v, ok := p.Get(d)
		if !ok && v != nil {
			t.Fatalf("Get(%q) returned %v with ok=false", path, v)
		}
		_ = p.GetString(d)
		_ = (&Selector{Path: p, Value: js}).Matches(d)
		p.Delete(d)
		if m, isMap := d.(map[string]any); isMap && len(p.Steps) == 1 && p.Steps[0].IsKey {
			if _, still := m[p.Steps[0].Key]; still {
				t.Fatalf("Delete(%q) left the top-level key in place", path)
			}
		}
	})
}

func TestWithoutLeavesTheOriginalAlone(t *testing.T) {
	spec := map[string]any{"keep": "x"}
	obj := map[string]any{
		"metadata": map[string]any{"name": "a", "annotations": map[string]any{"drop": "1", "keep": "2"}},
		"spec":     spec,
		"list":     []any{map[string]any{"drop": 1, "keep": 2}},
	}
	got := MustParse("metadata.annotations.drop").Without(obj)
	if _, ok := obj["metadata"].(map[string]any)["annotations"].(map[string]any)["drop"]; !ok {
		t.Fatal("the original lost the field")
	}
	ann := got["metadata"].(map[string]any)["annotations"].(map[string]any)
	if _, ok := ann["drop"]; ok || ann["keep"] != "2" {
		t.Fatalf("annotations %v", ann)
	}
	if got["spec"].(map[string]any)["keep"] != "x" || len(got) != 3 {
		t.Fatalf("the rest is not kept: %v", got)
	}
	got = MustParse("list[0].drop").Without(obj)
	if _, ok := got["list"].([]any)[0].(map[string]any)["drop"]; ok {
		t.Fatal("list element field not removed")
	}
	if _, ok := obj["list"].([]any)[0].(map[string]any)["drop"]; !ok {
		t.Fatal("the original list element lost the field")
	}
	if same := MustParse("metadata.missing").Without(obj); len(same) != len(obj) || same["spec"].(map[string]any)["keep"] != "x" {
		t.Fatal("an absent path changed the object")
	}
}
