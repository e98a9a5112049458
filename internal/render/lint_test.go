package render

import (
	"strings"
	"testing"
)

func TestLintFindsRawObjectText(t *testing.T) {
	text := strings.Join([]string{
		`backend {{ ing.Metadata.Name }}`,          // 1: raw field
		`# note: {{ n }}`,                          // 2: comment without comment()
		`# note: {{ comment(n) }}`,                 // ok
		`  server {{ cfg_word(ing.Spec.Host) }} x`, // ok
		`{{ l }}`,                               // ok: not traceable, checked on output
		`{# {{ ing.Spec.X }} #}`,                // ok: a template comment
		`  timeout {{ toint(x.Spec.Timeout) }}`, // ok
		`{% if x %}# {{ obj["metadata"]["name"] }}{% end %}`, // 8: comment
		`use_backend {{ o["spec"]["backend"] }}`,             // 9: untyped field
	}, "\n")
	got := lintText(text)
	lines := []int{}
	for _, f := range got {
		lines = append(lines, f.line)
	}
	if len(got) != 4 || lines[0] != 1 || lines[1] != 2 || lines[2] != 8 || lines[3] != 9 {
		t.Fatalf("findings: %+v", got)
	}
}
