package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

func golden(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestParseShowProc(t *testing.T) {
	tests := []struct {
		file            string
		master, reloads int
		failed          int
		current         int
		workers         int
	}{
		{"show_proc_initial.txt", 12454, 0, 0, 12457, 1},
		{"show_proc_failed.txt", 12454, 2, 1, 0, 1}, // the surviving worker has reloads 1
		{"show_proc_old_worker.txt", 32475, 2, 0, 2101, 2},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			pl, err := ParseShowProc(golden(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if pl.Master.PID != tt.master || pl.Master.Reloads != tt.reloads || pl.Failed != tt.failed || len(pl.Workers) != tt.workers {
				t.Fatalf("got %+v", pl)
			}
			cur, ok := pl.Current()
			if ok != (tt.current != 0) || cur.PID != tt.current {
				t.Fatalf("current %+v %v, want %d", cur, ok, tt.current)
			}
			if pl.Master.Version != "2.6.12-1+deb12u4" || pl.Workers[0].Uptime == "" {
				t.Fatalf("fields: %+v", pl)
			}
		})
	}
	for _, bad := range []string{"", "Unknown command\n", "#<PID> <type>\nabc master 0 [failed: 0] 0d 2.6\n"} {
		if _, err := ParseShowProc(bad); err == nil {
			t.Errorf("ParseShowProc(%q): no error", bad)
		}
	}
}

func TestParseShowInfo(t *testing.T) {
	info, err := ParseShowInfo(golden(t, "show_info.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != "2.6.12-1+deb12u4" || info.PID == 0 || info.Fields["Maxconn"] == "" {
		t.Fatalf("%+v", info)
	}
	if _, err := ParseShowInfo("Unknown command.\n"); err == nil {
		t.Fatal("no error on garbage")
	}
}

func TestParseServersState(t *testing.T) {
	servers, err := ParseServersState(golden(t, "show_servers_state.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 {
		t.Fatalf("%d servers", len(servers))
	}
	a1, a2 := servers[0], servers[1]
	if a1.Backend != "be_a" || a1.Server != "a1" || a1.Address != "127.0.0.1" || a1.Port != 9001 || a1.OpState != 2 || a1.AdminState != 0 || a1.Weight != 1 {
		t.Fatalf("a1 %+v", a1)
	}
	if a2.Server != "a2" || a2.Weight != 50 || a2.AdminState == 0 || a2.Fields["srv_check_status"] == "" {
		t.Fatalf("a2 %+v", a2)
	}
	empty, err := ParseServersState("1\n# be_id be_name srv_id\n\n")
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty: %v %v", empty, err)
	}
	if _, err := ParseServersState("2\n"); err == nil {
		t.Fatal("format 2 accepted")
	}
}

func TestParseShowMap(t *testing.T) {
	entries, err := ParseShowMap(golden(t, "show_map_host.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []MapEntry{{"a.test", "be_a"}, {"b.test", "be_b"}}
	if len(entries) != 2 || entries[0] != want[0] || entries[1] != want[1] {
		t.Fatalf("%+v", entries)
	}
	maps, err := ParseMapList(golden(t, "show_map_list.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(maps) != 1 || maps[0].File != "/tmp/aglab/host.map" || maps[0].Entries != 2 || maps[0].ID != "2" {
		t.Fatalf("%+v", maps)
	}
}

func TestVersion(t *testing.T) {
	tests := []struct {
		raw                 string
		major, minor, patch int
		caps                Capabilities
	}{
		{"2.6.12-1+deb12u4", 2, 6, 12, Capabilities{RuntimeMaps: true, DynamicServers: true, SSLRuntime: true}},
		{"3.4.0", 3, 4, 0, Capabilities{RuntimeMaps: true, DynamicServers: true, AddBackend: true, SSLRuntime: true}},
		{"3.3-dev2", 3, 3, 0, Capabilities{RuntimeMaps: true, DynamicServers: true, SSLRuntime: true}},
		{"2.4.22", 2, 4, 22, Capabilities{RuntimeMaps: true, SSLRuntime: true}},
	}
	for _, tt := range tests {
		v, err := ParseVersion(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		if v.Major != tt.major || v.Minor != tt.minor || v.Patch != tt.patch || v.Raw != tt.raw {
			t.Errorf("%s: %+v", tt.raw, v)
		}
		if got := CapabilitiesOf(v); got != tt.caps {
			t.Errorf("%s: caps %+v, want %+v", tt.raw, got, tt.caps)
		}
	}
	if _, err := ParseVersion("dev"); err == nil {
		t.Error("no error on garbage")
	}
}
