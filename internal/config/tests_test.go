package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWithTests(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("spec: {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base, baseTests := write("base.yaml"), write("base.tests.yaml")
	gw, gwTests := write("gateway.yaml"), write("gateway.tests.yaml")
	overlay := write("overlay.yaml") // no tests beside it
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"each library's tests follow it", []string{base, gw, overlay}, []string{base, baseTests, gw, gwTests, overlay}},
		{"tests given already are not added twice", []string{base, gw, baseTests}, []string{base, gw, gwTests, baseTests}},
		{"a tests file has no tests file", []string{gwTests}, []string{gwTests}},
		{"stdin", []string{"-"}, []string{"-"}},
	} {
		if got := WithTests(tc.in...); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The default libraries hold templates only; their tests load beside them.
func TestLibraryTestsBeside(t *testing.T) {
	for _, lib := range []string{"base", "ingress", "gateway"} {
		path := filepath.Join("..", "..", "charts", "haptic", "libraries", lib+".yaml")
		own, err := MergeFiles(path)
		if err != nil {
			t.Fatal(err)
		}
		if spec, _ := own["spec"].(map[string]any); spec["validationTests"] != nil {
			t.Errorf("%s holds validationTests; they belong in %s%s", path, lib, TestsSuffix)
		}
		merged, err := MergeFiles(WithTests(path)...)
		if err != nil {
			t.Fatal(err)
		}
		if spec, _ := merged["spec"].(map[string]any); spec["validationTests"] == nil {
			t.Errorf("%s: no validationTests in %s%s", path, lib, TestsSuffix)
		}
	}
}
