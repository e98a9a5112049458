package runtime

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// recorder passes commands to a real socket and records them.
type recorder struct {
	x    Execer
	cmds []string
}

func (r *recorder) Do(ctx context.Context, cmd string) (string, error) {
	r.cmds = append(r.cmds, cmd)
	return r.x.Do(ctx, cmd)
}

// waitMap waits until the worker answers `show map` for path and returns it.
func waitMap(t *testing.T, admin *Client, path string) []MapEntry {
	t.Helper()
	var got []MapEntry
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, err = ShowMap(context.Background(), admin, path); err == nil {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("show map %s: %v", path, err)
		}
	}
}

// mapCount is the entry count of the `show map` listing for path.
func mapCount(t *testing.T, admin *Client, path string) int {
	t.Helper()
	out, err := admin.Do(context.Background(), "show map")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := ParseMapList(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range maps {
		if m.File == path {
			return m.Entries
		}
	}
	t.Fatalf("map %s not loaded: %+v", path, maps)
	return 0
}

// TestMapFileParsingRealHAProxy: HAProxy loads a map file with comments, indented
// '#', blank lines, tabs, trailing blanks, CRs, NULs and long lines into exactly the
// entries ParseMapFile reads, and `show map` compares equal with them (DiffMap).
func TestMapFileParsingRealHAProxy(t *testing.T) {
	content := "# a comment\n" +
		"a.test be_a\n" +
		"   lead.test   be_lead\n" +
		"\ttab.test\t\tbe tab\tinner \t \n" +
		"   # indented: an entry, key '#'\n" +
		"\n   \n\t\r\n" +
		"crlf.test be_crlf\r\n" +
		"crmid.test be_x\rjunk\n" +
		"nul.test be\x00junk\n" +
		"lonely.test\n" +
		"spaces.test value  with   inner blanks   \n" +
		"long.test " + strings.Repeat("x", 19990) + "\n" + // 20,000 bytes: two entries
		"edge.test " + strings.Repeat("y", 16373) + "\n" + // 16,383 bytes + LF: one entry
		"#" + strings.Repeat("c", 16382) + "comment.tail value\n" + // a comment's tail is an entry
		"last.test be_last"
	want := ParseMapFile(content)
	_, admin, mapFile := startHAProxyMap(t, content)
	got := waitMap(t, admin, mapFile)
	if n := mapCount(t, admin, mapFile); n != len(want) {
		t.Fatalf("HAProxy loaded %d entries, ParseMapFile reads %d: %s", n, len(want), summarize(want))
	}
	if d := DiffMap(want, got); !d.Empty() {
		t.Fatalf("file and show map differ: %s\nshow map: %s", d, summarize(got))
	}
	// show map leaves out the first piece of long.test and the edge entry, which it
	// cannot print; everything else is compared entry by entry.
	if len(got) != len(want)-2 {
		t.Fatalf("show map printed %d of %d entries: %s", len(got), len(want), summarize(got))
	}
	if len(want) != 14 {
		t.Fatalf("ParseMapFile: %d entries: %s", len(want), summarize(want))
	}
	ctx := context.Background()
	for _, k := range []string{"long.test", "edge.test"} {
		out, err := admin.Do(ctx, "get map "+mapFile+" "+k)
		if err != nil || !strings.Contains(out, "found=yes") {
			t.Fatalf("get map %s: %q %v", k, out, err)
		}
	}
}

// TestMapEntriesRealHAProxy: entries with bytes the CLI escapes (blank, ';', '\'),
// "<<" inside, '#', non-UTF-8 bytes reach HAProxy exactly, one by one and batched;
// entries CheckMapEntry refuses are never sent and leave the map unchanged; the
// hazards they guard against are real.
func TestMapEntriesRealHAProxy(t *testing.T) {
	_, admin, mapFile := startHAProxy(t)
	ctx := context.Background()
	paths := func(string) string { return mapFile }
	initial := waitMap(t, admin, mapFile)

	tricky := []MapEntry{
		{"semi;key", "a;b;"},
		{`back\key\`, `x\`},
		{"k2", `\\ \;`},
		{"k3", "value  with   inner blanks"},
		{"k4", "a<<b"},
		{"k5<<x", "<"},
		{"k6", "#v"},
		{"k#7", "x"},
		{"h\xe9\xff", "\xfe\x80 é"},
		{"k8", `trailing\`},
	}
	for _, e := range tricky {
		if err := (&AddMap{Map: "host.map", Key: e.Key, Value: e.Value}).Run(ctx, admin, paths); err != nil {
			t.Fatal(err)
		}
	}
	want := append(append([]MapEntry{}, initial...), tricky...)
	if got := waitMap(t, admin, mapFile); !reflect.DeepEqual(got, want) {
		t.Fatalf("after add map:\n got %s\nwant %s", summarize(got), summarize(want))
	}
	// Batched: the ';' between commands and the escapes inside them must not mix.
	if lines := batch("add map @1 "+mapFile+" ", tricky); len(lines) != 1 {
		t.Fatalf("%d batch lines", len(lines))
	}
	if err := (&ReplaceMap{Map: "host.map", Entries: tricky}).Run(ctx, admin, paths); err != nil {
		t.Fatal(err)
	}
	if got := waitMap(t, admin, mapFile); !reflect.DeepEqual(got, tricky) {
		t.Fatalf("after replace map:\n got %s\nwant %s", summarize(got), summarize(tricky))
	}
	// The same entries written as a map file load the same way.
	var file strings.Builder
	for _, e := range tricky {
		if err := config.CheckMapEntry(e.Key, e.Value); err != nil {
			t.Fatal(err)
		}
		file.WriteString(e.Key + " " + e.Value + "\n")
	}
	if err := config.CheckMapFile(file.String()); err != nil {
		t.Fatal(err)
	}
	if got := ParseMapFile(file.String()); !reflect.DeepEqual(got, tricky) {
		t.Fatalf("map file reads back as %s", summarize(got))
	}

	// Refused entries: nothing reaches the socket and the map is unchanged.
	rec := &recorder{x: admin}
	refused := []Operation{
		&AddMap{Map: "host.map", Key: "evil.test", Value: "be_a\x00be_b"},
		&AddMap{Map: "host.map", Key: "evil\x00.test", Value: "be_a"},
		&AddMap{Map: "host.map", Key: "evil.test", Value: "be_a<<"},
		&AddMap{Map: "host.map", Key: "evil.test", Value: "be_a\tbe_b"},
		&AddMap{Map: "host.map", Key: "evil.test", Value: "be_a "},
		&AddMap{Map: "host.map", Key: "evil test", Value: "be_a"},
		&AddMap{Map: "host.map", Key: "#evil", Value: "be_a"},
		&AddMap{Map: "host.map", Key: "evil.test", Value: ""},
		&SetMap{Map: "host.map", Key: "semi;key", Value: "x\nadd map " + mapFile + " injected v"},
		&DelMap{Map: "host.map", Key: "k4<<"},
		&ReplaceMap{Map: "host.map", Entries: []MapEntry{{"ok.test", "be_a"}, {"evil.test", "be_a<<"}}},
		&AddMap{Map: "host.map", Key: "long.test", Value: strings.Repeat("v", config.MaxMapLine)},
		&AddMap{Map: "host.map", Key: "blanks.test", Value: "v" + strings.Repeat(" v", 7500)},
	}
	for _, op := range refused {
		if err := op.Run(ctx, rec, paths); err == nil || !strings.Contains(err.Error(), op.Kind()+" host.map ") {
			t.Errorf("%s %.60q: %v", op.Kind(), fmt.Sprint(op), err)
		}
	}
	if len(rec.cmds) != 0 {
		t.Fatalf("refused operations sent %d commands: %.200q", len(rec.cmds), rec.cmds)
	}
	if got := waitMap(t, admin, mapFile); !reflect.DeepEqual(got, tricky) {
		t.Fatalf("refused operations changed the map: %s", summarize(got))
	}

	// The hazards are real on this HAProxy: a trailing "<<" swallows the command
	// (and the rest of its line) with an empty reply, like a success.
	out, err := admin.Do(ctx, "add map "+mapFile+" payload.test v<<;add map "+mapFile+" after.test v")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("payload marker: %q %v", out, err)
	}
	if got := waitMap(t, admin, mapFile); !reflect.DeepEqual(got, tricky) {
		t.Fatalf("a command ending in << stored something: %s", summarize(got))
	}
}
