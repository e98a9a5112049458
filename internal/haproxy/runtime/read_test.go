package runtime

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// cannedExec answers one canned reply per command (unit tests of the read wrappers;
// TestReadBackRealHAProxy runs them against HAProxy).
type cannedExec map[string]string

func (f cannedExec) Do(_ context.Context, cmd string) (string, error) { return f[cmd], nil }

func TestParseServersStateDynamic(t *testing.T) {
	// be_dyn after `add server d1 ... weight 3` (not enabled), `add server d2` +
	// `enable server`, `add server d3` + enable + `set server state drain`.
	servers, err := ParseServersState(golden(t, "show_servers_state_dynamic.txt"))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name   string
		port   int
		weight int
		admin  int
		maint  bool
	}
	want := []row{{"d1", 9100, 3, AdminForcedMaint, true}, {"d2", 9101, 1, 0, false}, {"d3", 9102, 1, AdminForcedDrain, false}}
	if len(servers) != len(want) {
		t.Fatalf("%d servers: %+v", len(servers), servers)
	}
	for i, w := range want {
		s := servers[i]
		got := row{s.Server, s.Port, s.Weight, s.AdminState, s.Maint()}
		if got != w || s.Backend != "be_dyn" || s.Address != "127.0.0.1" {
			t.Errorf("server %d: %+v, want %+v", i, s, w)
		}
	}
	// The config's "disabled" server (admin 5 = forced + config maintenance).
	cfg, err := ParseServersState(golden(t, "show_servers_state.txt"))
	if err != nil || cfg[0].Maint() || !cfg[1].Maint() {
		t.Fatalf("maint of config servers: %+v %v", cfg, err)
	}
	_, err = ParseServersState(golden(t, "show_servers_state_unknown_backend.txt"))
	if err == nil || !strings.Contains(err.Error(), "Can't find backend") {
		t.Fatalf("unknown backend: %v", err)
	}
}

func TestParseShowMapRuntime(t *testing.T) {
	// host.map loaded as "a.test be_a / b.test be_b / # comment / c.test be value
	// with spaces", then `del map a.test` and `add map a.test be_x`: the re-added key
	// comes last.
	entries, err := ParseShowMap(golden(t, "show_map_after_runtime.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []MapEntry{{"b.test", "be_b"}, {"c.test", "be value with spaces"}, {"a.test", "be_x"}}
	if !reflect.DeepEqual(entries, want) {
		t.Fatalf("%+v", entries)
	}
	empty, err := ParseShowMap(golden(t, "show_map_empty.txt"))
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty map: %+v %v", empty, err)
	}
	if _, err := ParseShowMap(golden(t, "show_map_unknown.txt")); err == nil || !strings.Contains(err.Error(), "Unknown map") {
		t.Fatalf("unknown map: %v", err)
	}
}

func TestDiffMap(t *testing.T) {
	e := func(k, v string) MapEntry { return MapEntry{Key: k, Value: v} }
	tests := []struct {
		name           string
		want, running  []MapEntry
		missing, extra []MapEntry
	}{
		{"equal", []MapEntry{e("a", "1"), e("b", "2")}, []MapEntry{e("a", "1"), e("b", "2")}, nil, nil},
		{"order does not count", []MapEntry{e("a", "1"), e("b", "2")}, []MapEntry{e("b", "2"), e("a", "1")}, nil, nil},
		{"deleted key", []MapEntry{e("a", "1"), e("b", "2")}, []MapEntry{e("b", "2")}, []MapEntry{e("a", "1")}, nil},
		{"changed value", []MapEntry{e("a", "1")}, []MapEntry{e("a", "9")}, []MapEntry{e("a", "1")}, []MapEntry{e("a", "9")}},
		{"duplicate counts", []MapEntry{e("a", "1")}, []MapEntry{e("a", "1"), e("a", "1")}, nil, []MapEntry{e("a", "1")}},
		{"both empty", nil, nil, nil, nil},
	}
	for _, tt := range tests {
		d := DiffMap(tt.want, tt.running)
		if !reflect.DeepEqual(d.Missing, tt.missing) || !reflect.DeepEqual(d.Extra, tt.extra) {
			t.Errorf("%s: %+v", tt.name, d)
		}
		if d.Empty() != (tt.missing == nil && tt.extra == nil) {
			t.Errorf("%s: Empty() = %v", tt.name, d.Empty())
		}
	}
	if s := DiffMap([]MapEntry{e("a", "1")}, []MapEntry{e("a", "9")}).String(); s != "1 missing (a 1), 1 extra (a 9)" {
		t.Errorf("String: %q", s)
	}
}

func TestReadWrappers(t *testing.T) {
	x := cannedExec{
		"show servers state be_dyn":   golden(t, "show_servers_state_dynamic.txt"),
		"show servers state nope":     golden(t, "show_servers_state_unknown_backend.txt"),
		"show map /m/host.map":        golden(t, "show_map_after_runtime.txt"),
		`show map /m/with\ space.map`: golden(t, "show_map_empty.txt"),
		"show map /m/gone.map":        golden(t, "show_map_unknown.txt"),
	}
	ctx := context.Background()
	if s, err := ShowServersState(ctx, x, "be_dyn"); err != nil || len(s) != 3 {
		t.Fatalf("be_dyn: %d %v", len(s), err)
	}
	if _, err := ShowServersState(ctx, x, "nope"); err == nil || !strings.Contains(err.Error(), "backend nope") {
		t.Fatalf("nope: %v", err)
	}
	if _, err := ShowServersState(ctx, x, "be;show info"); err == nil {
		t.Fatal("injected command accepted")
	}
	if m, err := ShowMap(ctx, x, "/m/host.map"); err != nil || len(m) != 3 {
		t.Fatalf("host.map: %+v %v", m, err)
	}
	if m, err := ShowMap(ctx, x, "/m/with space.map"); err != nil || len(m) != 0 {
		t.Fatalf("escaped path: %+v %v", m, err)
	}
	if _, err := ShowMap(ctx, x, "/m/host.map<<"); err == nil {
		t.Fatal("a path ending in << was sent")
	}
	if _, err := ShowMap(ctx, x, "/m/gone.map"); err == nil {
		t.Fatal("unknown map: no error")
	}
}
