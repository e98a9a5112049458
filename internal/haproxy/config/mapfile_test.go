package config

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckMapEntry: the one rule for map entries, which the renderer's writers, the
// check of rendered maps, the agent and the runtime client all apply.
func TestCheckMapEntry(t *testing.T) {
	long := strings.Repeat("v", MaxMapLine-2) // "k " + value = MaxMapLine
	ok := [][2]string{
		{"a.test", "be_a"},
		{"a.test", "value with  inner   blanks"},
		{"k", `back\slash\`},
		{"k;x", "a;b;"},
		{`k\`, `\\`},
		{"k", "a<<b"},
		{"k<<x", "<<v"},
		{"k", "<"},
		{"k#", "#v"},
		{"héllo", "wörld"},
		{"\xff\xfe", "\x80"},
		{"k", ""}, // a key-only line; add/set map refuse it (runtime's TestMapOpsRefuseUnsendable)
		{"k", long},
	}
	for _, e := range ok {
		if err := CheckMapEntry(e[0], e[1]); err != nil {
			t.Errorf("CheckMapEntry(%q, %q): %v", e[0], e[1], err)
		}
	}
	bad := []struct {
		key, value string
		context    string
		why        string
	}{
		{"", "v", "map key", "is empty"},
		{"a\x00b", "v", "map key", "holds a NUL byte"},
		{"k", "a\x00b", "map value", "holds a NUL byte"},
		{"a\nb", "v", "map key", "holds a newline"},
		{"k", "v\n", "map value", "holds a newline"},
		{"k", "v\r", "map value", "holds a carriage return"},
		{"k", "a\tb", "map value", "holds a tab"},
		{"a\tb", "v", "map key", "holds a tab"},
		{"k", "\x1b[31m", "map value", "control character 0x1b"},
		{"k", "del\x7f", "map value", "control character 0x7f"},
		{"a b", "v", "map key", "holds a space"},
		{"#k", "v", "map key", "starts with '#'"},
		{"k<<", "v", "map key", `ends with "<<"`},
		{"k", "v<<", "map value", `ends with "<<"`},
		{"k", "<<", "map value", `ends with "<<"`},
		{"k", " v", "map value", "starts or ends with a space"},
		{"k", "v ", "map value", "starts or ends with a space"},
		{"k", "v\u00a0", "map value", "starts or ends with a space"},
		{"k", long + "x", "map entry", "makes a 16001-byte line (the limit is 16000)"},
		{strings.Repeat("k", MaxMapLine-1), "vv", "map entry", "the limit is 16000"},
		{strings.Repeat("k", MaxMapLine+1), "v", "map key", "the limit of a map line is 16000"},
	}
	for _, tt := range bad {
		err := CheckMapEntry(tt.key, tt.value)
		var ce *ContextError
		if !errors.As(err, &ce) {
			t.Errorf("CheckMapEntry(%.20q, %.20q) = %v, want a *ContextError", tt.key, tt.value, err)
			continue
		}
		if ce.Context != tt.context || !strings.Contains(err.Error(), tt.why) || !strings.HasPrefix(err.Error(), tt.context+" \"") {
			t.Errorf("CheckMapEntry(%.20q, %.20q) = %q (%s), want %s and %q", tt.key, tt.value, err, ce.Context, tt.context, tt.why)
		}
	}
	// The offending text is quoted, truncated to 60 bytes.
	err := CheckMapEntry("k", strings.Repeat("x", 100)+"\n")
	if err == nil || !strings.Contains(err.Error(), strings.Repeat("x", 60)+"…") || strings.Contains(err.Error(), strings.Repeat("x", 61)) {
		t.Errorf("truncation: %v", err)
	}
}

func TestSplitMapLineLikeHAProxy(t *testing.T) {
	tests := []struct {
		line, key, value string
		ok               bool
	}{
		{"a.test be_a\n", "a.test", "be_a", true},
		{"  a.test \t be a  \r\n", "a.test", "be a", true},
		{"#comment", "", "", false},
		{"  # x", "#", "x", true}, // only a '#' in the first byte makes a comment
		{" \t \n", "", "", false},
		{"keyonly", "keyonly", "", true},
		{"k v\x00rest", "k", "v", true}, // NUL ends the value, as in C
		{"k\x00v", "k", "", true},
		{"k a\rb", "k", "a", true},
	}
	for _, tt := range tests {
		k, v, ok := SplitMapLine(tt.line)
		if k != tt.key || v != tt.value || ok != tt.ok {
			t.Errorf("SplitMapLine(%q) = %q, %q, %v; want %q, %q, %v", tt.line, k, v, ok, tt.key, tt.value, tt.ok)
		}
	}
}

func TestCheckMapFileNamesTheLine(t *testing.T) {
	ok := []string{
		"",
		"a.test be_a\n",
		"# generated\n\na.test be_a\r\n  b.test\tbe b  \n#" + strings.Repeat("c", 100) + "\n",
		"k " + strings.Repeat("v", MaxMapLine-2) + "\n",
		"# a comment may hold \r and \x1b anything\n",
		"lonely\n",
	}
	for _, c := range ok {
		if err := CheckMapFile(c); err != nil {
			t.Errorf("CheckMapFile(%.40q): %v", c, err)
		}
	}
	bad := []struct{ content, want string }{
		{"a be_a\nk " + strings.Repeat("v", MaxMapLine-1) + "\n", "line 2: 16001 bytes long"},
		{"#" + strings.Repeat("c", 20000) + "\n", "line 1: 20001 bytes long"},
		{"# a comment may not hold \x00\n", "line 1: holds a NUL byte at byte 25"},
		{"a be_a\n  # indented\n", `line 2: map key "#"`},
		{"a be\x00_a\n", "line 1: holds a NUL byte at byte 4"},
		{"a be\r_a\n", "line 1: holds a carriage return at byte 4"},
		{"a be_a\x1b\n", "line 1: holds the control character 0x1b"},
		{"k a\tb\n", `line 1: map value "a\tb"`},
		{"k v<<\n", `line 1: map value "v<<"`},
		{"k;a b\nk<< v\n", `line 2: map key "k<<"`},
		{"k v\x7f\n", "line 1: holds the control character 0x7f"},
	}
	for _, tt := range bad {
		err := CheckMapFile(tt.content)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckMapFile(%.40q) = %v, want %q", tt.content, err, tt.want)
		}
	}
}
