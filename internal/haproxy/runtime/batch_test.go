package runtime

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestSplitReplies(t *testing.T) {
	for _, c := range []struct {
		out  string
		n    int
		want []string
		err  bool
	}{
		{"\n", 1, []string{""}, false},
		{"", 1, []string{""}, false},
		{"\n\n\n", 3, []string{"", "", ""}, false},
		{"type=str, found=yes, key=\"a\"\n\ntype=str, found=no\n\nKey not found.\n\n\n", 4,
			[]string{`type=str, found=yes, key="a"`, "type=str, found=no", "Key not found.", ""}, false},
		{"\nUnknown command\n\n", 2, []string{"", "Unknown command"}, false},
		{"\n\n", 3, nil, true},     // a reply missing
		{"\n\n\n\n", 3, nil, true}, // one too many
		{"a\n\nb\nc\n\n", 2, []string{"a", "b\nc"}, false},
	} {
		got, err := splitReplies(c.out, c.n)
		if (err != nil) != c.err || (!c.err && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("splitReplies(%q, %d) = %q, %v; want %q (error %v)", c.out, c.n, got, err, c.want, c.err)
		}
	}
}

// scripted answers each ';'-joined line with one reply per command: bad for a
// command that holds a failing key, "" for the rest.
type scripted struct {
	lines []string
	fail  string
}

func (s *scripted) Do(_ context.Context, line string) (string, error) {
	s.lines = append(s.lines, line)
	var out strings.Builder
	for _, cmd := range splitCommands(line) {
		if s.fail != "" && strings.Contains(cmd, s.fail) {
			out.WriteString("entry not found.\n")
		}
		out.WriteString("\n")
	}
	return out.String(), nil
}

// splitCommands cuts a line at its unescaped ';'.
func splitCommands(line string) []string {
	var cmds []string
	start := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case ';':
			cmds, start = append(cmds, line[start:i]), i+1
		}
	}
	return append(cmds, line[start:])
}

func TestRunOpsJoinsMapEntries(t *testing.T) {
	maps := func(name string) string { return "/m/" + name }
	ops := []Op{
		{&AddMap{Map: "host.map", Key: "a;1", Value: `v\1`}},
		{&SetMap{Map: "host.map", Key: "b\\2", Value: "v 2"}},
		{&SetServerState{Backend: "be", Server: "s1", State: "ready"}},
		{&DelMap{Map: "path.map", Key: "gone"}},
		{&AddMap{Map: "path.map", Key: "c", Value: "v3"}},
	}
	x := &scripted{}
	sent, _, err := RunOps(context.Background(), x, maps, ops)
	if err != nil || sent != len(ops) {
		t.Fatalf("sent %d, %v", sent, err)
	}
	want := []string{
		`add map /m/host.map a\;1 v\\1;set map /m/host.map b\\2 v\ 2`,
		"set server be/s1 state ready",
		"del map /m/path.map gone;add map /m/path.map c v3",
	}
	if !reflect.DeepEqual(x.lines, want) {
		t.Fatalf("lines:\n%q\nwant\n%q", x.lines, want)
	}

	// A failing entry is named by its index; the rest of its line ran too.
	x = &scripted{fail: "b\\\\2"}
	sent, failed, err := RunOps(context.Background(), x, maps, ops)
	if err == nil || failed != 1 || sent != 2 || !strings.Contains(err.Error(), `set-map host.map key "b\\2": set map: entry not found.`) {
		t.Fatalf("sent %d, failed %d: %v", sent, failed, err)
	}
	if len(x.lines) != 1 {
		t.Fatalf("ran on after the failure: %q", x.lines)
	}

	// An invalid entry is never sent; those before it are.
	bad := append(append([]Op{}, ops[:2]...), Op{&AddMap{Map: "host.map", Key: "evil", Value: "x\nadd map /m/host.map k v"}}, ops[4])
	x = &scripted{}
	sent, failed, err = RunOps(context.Background(), x, maps, bad)
	if err == nil || failed != 2 || sent != 2 || len(x.lines) != 1 || strings.Contains(x.lines[0], "evil") {
		t.Fatalf("sent %d, failed %d, lines %q: %v", sent, failed, x.lines, err)
	}
}

func TestDoEachSplitsLongBatches(t *testing.T) {
	var cmds []string
	for i := range 900 {
		cmds = append(cmds, fmt.Sprintf("get map /m/host.map key-%04d", i))
	}
	x := &scripted{}
	replies, err := DoEach(context.Background(), x, cmds)
	if err != nil || len(replies) != len(cmds) {
		t.Fatalf("%d replies: %v", len(replies), err)
	}
	if len(x.lines) < 3 {
		t.Fatalf("%d lines for %d commands", len(x.lines), len(cmds))
	}
	var again []string
	for _, l := range x.lines {
		if len(l) > MaxLine {
			t.Fatalf("line of %d bytes", len(l))
		}
		again = append(again, splitCommands(l)...)
	}
	if !reflect.DeepEqual(again, cmds) {
		t.Fatal("the lines do not hold the commands in order")
	}
}
