package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

func TestParseMapFile(t *testing.T) {
	long := "long " + strings.Repeat("x", 19995) // a 20,000-byte line
	tests := []struct {
		name    string
		content string
		want    []MapEntry
	}{
		{"plain", "a.test be_a\nb.test be_b\n", []MapEntry{{"a.test", "be_a"}, {"b.test", "be_b"}}},
		{"no final newline", "a.test be_a\nb.test be_b", []MapEntry{{"a.test", "be_a"}, {"b.test", "be_b"}}},
		{"empty file", "", nil},
		{"leading blanks", "   a.test be_a\n\t \tb.test be_b\n", []MapEntry{{"a.test", "be_a"}, {"b.test", "be_b"}}},
		{"tabs between key and value", "a.test\tbe_a\nb.test \t\t be_b\n", []MapEntry{{"a.test", "be_a"}, {"b.test", "be_b"}}},
		{"comment lines", "# header\na.test be_a\n#b.test be_b\n", []MapEntry{{"a.test", "be_a"}}},
		// Only a '#' in the first byte makes a comment: HAProxy tests it before
		// skipping leading blanks.
		{"indented hash is an entry", "  # not a comment\n\t#x y\n", []MapEntry{{"#", "not a comment"}, {"#x", "y"}}},
		{"empty and blank lines", "\n\na.test be_a\n   \n\t\n\r\n \r\n", []MapEntry{{"a.test", "be_a"}}},
		{"value with inner blanks", "a.test be value  with\tinner blanks\n", []MapEntry{{"a.test", "be value  with\tinner blanks"}}},
		{"trailing blanks and CR", "a.test be_a  \t\r\nb.test be_b\r\nc.test be_c \r\n", []MapEntry{{"a.test", "be_a"}, {"b.test", "be_b"}, {"c.test", "be_c"}}},
		{"key only", "lonely\nlonely2   \r\n", []MapEntry{{"lonely", ""}, {"lonely2", ""}}},
		{"CR inside a line ends it", "a.test be_a\rjunk\nk\rv\n", []MapEntry{{"a.test", "be_a"}, {"k", ""}}},
		{"NUL ends a line", "a.test be\x00_a\nk\x00v\n\x00x y\n", []MapEntry{{"a.test", "be"}, {"k", ""}}},
		{"special bytes kept", "k;x a;b\\c<<\nhé \xffv\n", []MapEntry{{"k;x", "a;b\\c<<"}, {"hé", "\xffv"}}},
		// fgets reads 16,383 bytes at most: the rest of the line is a line of its own.
		{"20,000-byte line", long + "\nb.test be_b\n", []MapEntry{
			{"long", strings.Repeat("x", config.MapFileBufSize-1-len("long "))},
			{strings.Repeat("x", 20000-(config.MapFileBufSize-1)), ""},
			{"b.test", "be_b"},
		}},
		{"16,383 bytes and LF: the LF alone is an empty line", "k " + strings.Repeat("y", 16381) + "\nb v\n", []MapEntry{
			{"k", strings.Repeat("y", 16381)}, {"b", "v"},
		}},
		{"16,382 bytes and LF: one line", "k " + strings.Repeat("y", 16380) + "\nb v\n", []MapEntry{
			{"k", strings.Repeat("y", 16380)}, {"b", "v"},
		}},
		{"split piece starting with blanks", "k " + strings.Repeat("y", 16381) + "   z w\n", []MapEntry{
			{"k", strings.Repeat("y", 16381)}, {"z", "w"},
		}},
		{"long comment: its tail is an entry", "#" + strings.Repeat("c", 16382) + "tail value\n", []MapEntry{{"tail", "value"}}},
		{"long comment: a '#' tail is a comment", "#" + strings.Repeat("c", 16382) + "#tail\n", nil},
	}
	for _, tt := range tests {
		got := ParseMapFile(tt.content)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %s, want %s", tt.name, summarize(got), summarize(tt.want))
		}
	}
}

// summarize prints entries with long keys and values shortened.
func summarize(es []MapEntry) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, quoteShort(e.Key)+"→"+quoteShort(e.Value))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func TestDiffMapSkipsWhatShowMapCannotPrint(t *testing.T) {
	huge := MapEntry{"k", strings.Repeat("v", MaxShowMapEntry)} // "k " + value: one byte too many
	fits := MapEntry{"j", strings.Repeat("v", MaxShowMapEntry-2)}
	if d := DiffMap([]MapEntry{{"a", "1"}, huge, fits}, []MapEntry{fits, {"a", "1"}}); !d.Empty() {
		t.Fatalf("an entry show map leaves out counts: %s", d)
	}
	if d := DiffMap([]MapEntry{{"a", "1"}, fits}, []MapEntry{{"a", "1"}}); d.String() != "1 missing (j "+strings.Repeat("v", 98)+"...)" {
		t.Fatalf("a printable entry is compared: %s", d)
	}
}

func TestEscape(t *testing.T) {
	tests := map[string]string{
		"plain":         "plain",
		"a b":           `a\ b`,
		"a\tb":          "a\\\tb",
		"a;b":           `a\;b`,
		`a\b`:           `a\\b`,
		`x\`:            `x\\`,
		"\xff\xfe é<<#": "\xff\xfe\\ é<<#",
	}
	for in, want := range tests {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMapOpsRefuseUnsendable: an entry CheckMapEntry refuses, or whose command is
// too long for HAProxy's CLI, fails Validate and Run, and Run sends nothing.
func TestMapOpsRefuseUnsendable(t *testing.T) {
	spaces := strings.Repeat("a ", 7000) + "a" // 14,001 bytes, 21,001 escaped
	tests := []struct {
		op       Operation
		validate bool // Validate refuses it too (else only the command length does)
		want     string
	}{
		{&AddMap{Map: "host.map", Key: "a.test", Value: "be_a\nshow info"}, true, `add-map host.map key "a.test": map value "be_a\nshow info"`},
		{&AddMap{Map: "host.map", Key: "a\x00b", Value: "v"}, true, `add-map host.map key "a\x00b": map key "a\x00b"`},
		{&AddMap{Map: "host.map", Key: "a.test", Value: ""}, true, `add-map host.map key "a.test": map value "" is empty (add map and set map need a value)`},
		{&SetMap{Map: "host.map", Key: "a.test", Value: "be_x<<"}, true, `set-map host.map key "a.test": map value "be_x<<"`},
		{&SetMap{Map: "host.map", Key: "a b", Value: "v"}, true, `set-map host.map key "a b": map key "a b"`},
		{&DelMap{Map: "host.map", Key: "k<<"}, true, `del-map host.map key "k<<": map key "k<<"`},
		{&DelMap{Map: "host.map", Key: "#k"}, true, `del-map host.map key "#k": map key "#k"`},
		{&ReplaceMap{Map: "host.map", Entries: []MapEntry{{"a", "1"}, {"b", "x\r"}}}, true, `replace-map host.map entry 1 key "b": map value "x\r"`},
		{&ReplaceMap{Map: "host.map", Entries: []MapEntry{{"a", "1"}, {"b", ""}}}, true, `replace-map host.map entry 1 key "b": map value "" is empty`},
		{&AddMap{Map: "host.map<<", Key: "k", Value: "v"}, true, `invalid map name`},
		{&AddMap{Map: "host.map", Key: "k", Value: spaces}, false, `add-map host.map key "k": command of 21024 bytes is longer than HAProxy's CLI takes (15360); not sent`},
		{&ReplaceMap{Map: "host.map", Entries: []MapEntry{{"a", "1"}, {"k", spaces}}}, false, `replace-map host.map key "k": command of `},
	}
	for _, tt := range tests {
		verr := tt.op.Validate()
		if tt.validate != (verr != nil) {
			t.Errorf("%s: Validate = %v", tt.op.Kind(), verr)
		}
		x := &fakeExec{replies: map[string]string{"prepare map": "New version created: 1\n"}}
		err := tt.op.Run(context.Background(), x, mapsIn("/m"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Run = %v, want %q", tt.op.Kind(), err, tt.want)
		}
		if len(x.cmds) > 0 {
			t.Errorf("%s: sent %.80q", tt.op.Kind(), x.cmds)
		}
	}
}

// TestMapFileEntriesFor: the entries of some keys are ParseMapFile's entries of
// those keys, whatever the blanks, comments and prefixes around them.
func TestMapFileEntriesFor(t *testing.T) {
	content := "a.test be_a\n  ab.test\tbe_ab\n# a.test be_comment\nb.test be_b\r\na.test be_dup\nabc\n\n   \nc.test  v w\n"
	keys := map[string]bool{"a.test": true, "c.test": true, "abc": true, "zz": true, "#": true}
	var want []MapEntry
	for _, e := range ParseMapFile(content) {
		if keys[e.Key] {
			want = append(want, e)
		}
	}
	if got := MapFileEntriesFor(content, keys); !reflect.DeepEqual(got, want) || len(want) != 4 {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestMapFileEntriesForIsAParse: on random map files (long lines cut by the read
// buffer, keys inside values and other keys, blanks, comments, CR), the entries
// of some keys are those a parse of every line finds.
func TestMapFileEntriesForIsAParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{"a.test", "ab.test", "b", "/x", "#c", "a", "@gw:80/h.example.com/r1", "v"}
	word := func() string { return words[rng.IntN(len(words))] }
	for round := range 400 {
		var b strings.Builder
		for range 1 + rng.IntN(40) {
			switch rng.IntN(10) {
			case 0:
				b.WriteString("# " + word() + " " + word())
			case 1:
				b.WriteString(strings.Repeat(" ", rng.IntN(3)) + "\t" + word() + " " + word())
			case 2: // longer than a read: the rest is a line of its own
				b.WriteString(word() + " " + strings.Repeat("x", config.MapFileBufSize-rng.IntN(40)) + " " + word() + " " + word())
			case 3:
				b.WriteString(word() + word() + "\r")
			default:
				b.WriteString(word() + " " + word() + " " + word())
			}
			b.WriteString("\n")
		}
		content := b.String()
		if rng.IntN(4) == 0 {
			content = strings.TrimSuffix(content, "\n")
		}
		keys := map[string]bool{}
		for range 1 + rng.IntN(3) {
			keys[word()] = true
		}
		var want []MapEntry
		for _, e := range ParseMapFile(content) {
			if keys[e.Key] {
				want = append(want, e)
			}
		}
		if got := MapFileEntriesFor(content, keys); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d, keys %v: got %q, want %q", round, keys, got, want)
		}
	}
}

// BenchmarkMapFileEntriesFor reads back two keys of a host map of 3,000 routes
// (about 150 KB), as the agent does after a route's runtime operations.
func BenchmarkMapFileEntriesFor(b *testing.B) {
	var sb strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&sb, "@gw:80/%d-route.example.com @gw:80/%d-route.example.com\n", i, i)
	}
	content := sb.String()
	keys := map[string]bool{"@gw:80/1500-route.example.com": true, "@gw:80/2999-route.example.com": true}
	b.ReportAllocs()
	for b.Loop() {
		if got := MapFileEntriesFor(content, keys); len(got) != 2 {
			b.Fatalf("%d entries", len(got))
		}
	}
}
