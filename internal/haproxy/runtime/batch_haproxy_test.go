package runtime

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestRunOpsRealHAProxy: map entries sent ';'-joined (escapes, a missing key to
// delete, lines split at MaxLine) leave the worker's map as one command each
// would, and each reply is read as its own command's.
func TestRunOpsRealHAProxy(t *testing.T) {
	_, admin, mapFile := startHAProxy(t) // a.test be_a, b.test be_b
	ctx := context.Background()
	paths := func(string) string { return mapFile }
	waitMap(t, admin, mapFile)

	ops := []Op{
		{&AddMap{Map: "host.map", Key: "semi;key", Value: "a;b;"}},
		{&AddMap{Map: "host.map", Key: `back\key\`, Value: `x\`}},
		{&DelMap{Map: "host.map", Key: "a.test"}},
		{&DelMap{Map: "host.map", Key: "missing.test"}},
		{&SetMap{Map: "host.map", Key: "b.test", Value: "value  with   blanks"}},
	}
	want := []MapEntry{{"b.test", "value  with   blanks"}, {"semi;key", "a;b;"}, {`back\key\`, `x\`}}
	for i := range 600 {
		k, v := fmt.Sprintf("host-%03d.example.com", i), fmt.Sprintf("be_%03d", i)
		ops = append(ops, Op{&AddMap{Map: "host.map", Key: k, Value: v}})
		want = append(want, MapEntry{k, v})
	}
	rec := &recorder{x: admin}
	if sent, _, err := RunOps(ctx, rec, paths, ops); err != nil || sent != len(ops) {
		t.Fatalf("sent %d of %d: %v", sent, len(ops), err)
	}
	if len(rec.cmds) < 2 || len(rec.cmds) > 8 {
		t.Fatalf("%d exchanges for %d entries", len(rec.cmds), len(ops))
	}
	if got := waitMap(t, admin, mapFile); !reflect.DeepEqual(got, want) {
		t.Fatalf("map after RunOps:\n got %s\nwant %s", summarize(got), summarize(want))
	}

	replies, err := DoEach(ctx, admin, []string{
		"get map " + Escape(mapFile) + " " + Escape("semi;key"),
		"get map " + Escape(mapFile) + " a.test",
		"get map " + Escape(mapFile) + " " + Escape(`back\key\`),
	})
	if err != nil || len(replies) != 3 ||
		!strings.Contains(replies[0], `found=yes`) || !strings.Contains(replies[0], `value="a;b;"`) ||
		!strings.HasSuffix(replies[1], "found=no") ||
		!strings.Contains(replies[2], `value="x\"`) {
		t.Fatalf("get map replies %q: %v", replies, err)
	}

	// A failing entry is reported by index; the others of its line still ran.
	failing := []Op{
		{&AddMap{Map: "host.map", Key: "before.test", Value: "be_x"}},
		{&SetMap{Map: "host.map", Key: "nowhere.test", Value: "be_x"}},
		{&AddMap{Map: "host.map", Key: "after.test", Value: "be_x"}},
	}
	sent, failed, err := RunOps(ctx, admin, paths, failing)
	if err == nil || failed != 1 || sent != 3 || !strings.Contains(err.Error(), `set-map host.map key "nowhere.test": set map: `) {
		t.Fatalf("sent %d, failed %d: %v", sent, failed, err)
	}
	got := waitMap(t, admin, mapFile)
	if tail := got[len(got)-2:]; !reflect.DeepEqual(tail, []MapEntry{{"before.test", "be_x"}, {"after.test", "be_x"}}) {
		t.Fatalf("map ends with %s", summarize(tail))
	}
}
