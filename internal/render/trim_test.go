package render

import (
	"strings"
	"testing"

	"github.com/open2b/scriggo"
)

// runTrimmed compiles src after trimMarkers with plain Scriggo and returns its
// output, not normalised, so that the whitespace semantics are visible.
func runTrimmed(t *testing.T, src string) (string, error) {
	t.Helper()
	tmpl, err := buildTemplate(scriggo.Files{"t": []byte(trimMarkers(src))}, "t", nil) // serialised like every build
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = tmpl.Run(&b, nil, nil)
	return b.String(), err
}

// TestTrimMarkers checks each marker against the output Jinja (and HAPTIC) give.
func TestTrimMarkers(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, src, want string }{
		{"no markers", "a  {% if true %} b {% end %}\n", "a   b \n"},
		{"statement left", "a \t\n {%- if true %}b{% end %}", "ab"},
		{"statement right", "a{% if true -%} \n\n b{% end %}", "ab"},
		{"statement both", "a\n  {%- if true -%}\n  b\n  {%- end -%}\n  c", "abc"},
		{"value both", "x\n  {{- 1 -}}  \ny", "x1y"},
		{"value left only", "x  {{- 1 }}  y", "x1  y"},
		{"negative number is not a marker", "x {{-1}} y", "x -1 y"},
		{"comment both", "a\n{#- note -#}\nb", "ab"},
		{"comment left only", "a\n  {#- note #}\nb", "a\nb"},
		{"nested comment", "a {#- x {# y #} z -#}  b", "ab"},
		{"marker inside a string", `{% var s = "-%}" -%}  {{ s }}`, "-%}"},
		{"marker inside a raw string", "{% var s = `{%- x -%}` %}{{ s }}", "{%- x -%}"},
		{"composite literal braces", "{{ len([]int{1}) -}} \n x", "1x"},
		{"multi-line statements", "{%% var y = 2 %%}\n{{- y }}", "2"},
		{"raw body untouched", "{% raw %} {%- keep -%} {% end raw %}", " {%- keep -%} "},
		{"left after open brace", "{\n {%- if true %}x{% end %}", "{x"},
		{"guide loop", "L:\n{%- for _, x := range []int{1, 2} %}\n  {{ x }}\n{%- end %}\n.", "L:\n  1\n  2\n."},
		{"guide early filter", "{#- GOOD: Filter early -#}\n{%- var m = []any{} %}\n{%- for _, x := range []int{1, 2} %}\n  {%- if x > 1 %}\n    {%- m = append(m, x) %}\n  {%- end %}\n{%- end %}\n{{ len(m) }}",
			"\n1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := runTrimmed(t, c.src)
			if err != nil {
				t.Fatalf("%v\nsource after trimMarkers:\n%s", err, trimMarkers(c.src))
			}
			if got != c.want {
				t.Errorf("output %q, want %q\nsource after trimMarkers:\n%s", got, c.want, trimMarkers(c.src))
			}
		})
	}
}

// TestTrimMarkersKeepLines checks that an error after trimmed newlines is still
// reported at the author's line and column.
func TestTrimMarkersKeepLines(t *testing.T) {
	t.Parallel()
	src := "a\n\n   {%- if true -%}\n\n\n  {{ nope }}{% end %}\n"
	_, err := runTrimmed(t, src)
	if err == nil || !strings.Contains(err.Error(), "t:6:6:") {
		t.Fatalf("error %v, want one at t:6:6 (the author's line and column)", err)
	}
}

// TestTrimMarkersUntouched checks that a template without markers is passed on as it is.
func TestTrimMarkersUntouched(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"", "global\n  maxconn {{ 1 - 2 }}\n", "{# a - b #}{{ x-1 }}", "{ - }", "{%", "{{ \"unterminated"} {
		if got := trimMarkers(src); got != src {
			t.Errorf("trimMarkers(%q) = %q, want it unchanged", src, got)
		}
	}
}
