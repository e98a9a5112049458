package agent

import (
	"reflect"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

func TestConfigServers(t *testing.T) {
	cfg := `global
    stats socket /x level admin
defaults
    default-server weight 9
backend be_a # comment
    balance roundrobin
    server a1 10.0.0.1:80 weight 5 check
    server a2 [::1]:8080 disabled
    server a3 svc.example:80
    # server a4 10.0.0.4:80
    server-template t 3 10.0.0.9:80
listen li
    server l1 10.0.0.2:81 disabled enabled #weight 7
frontend fe
    server nope 10.0.0.3:80
`
	got, templated, err := configServers(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !templated["be_a"] || len(templated) != 1 {
		t.Errorf("templated = %v, want be_a", templated)
	}
	want := map[string]map[string]cfgServer{
		"be_a": {
			"a1": {address: "10.0.0.1", port: 80, weight: 5, weighted: true},
			"a2": {address: "::1", port: 8080, weight: 1, disabled: true},
			"a3": {weight: 1},
		},
		"li": {"l1": {address: "10.0.0.2", port: 81, weight: 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// TestConfigServersNeedsAParsableConfig: a config the parser refuses is an error (the
// read-back then reloads), not a config without servers.
func TestConfigServersNeedsAParsableConfig(t *testing.T) {
	if _, _, err := configServers("backend be\n    server s1 '10.0.0.1:80\n"); err == nil {
		t.Fatal("an unterminated quote must be an error")
	}
}

func TestServerDiff(t *testing.T) {
	line := cfgServer{address: "10.0.0.1", port: 80, weight: 1}
	run := runtime.ServerState{Address: "10.0.0.1", Port: 80, Weight: 1}
	tests := []struct {
		name      string
		weightSet bool
		want      cfgServer
		inCfg     bool
		got       runtime.ServerState
		running   bool
		diff      string
	}{
		{"same", true, line, true, run, true, ""},
		{"absent both", false, cfgServer{}, false, runtime.ServerState{}, false, ""},
		{"extra", false, cfgServer{}, false, run, true, "running but not in the configuration"},
		{"missing", false, line, true, runtime.ServerState{}, false, "in the configuration but not running"},
		{"port", false, line, true, runtime.ServerState{Address: "10.0.0.1", Port: 81, Weight: 1}, true, "address 10.0.0.1:81, want 10.0.0.1:80"},
		{"name address not compared", false, cfgServer{weight: 1}, true, runtime.ServerState{Address: "10.9.9.9", Port: 1, Weight: 1}, true, ""},
		{"weight set by op", true, line, true, runtime.ServerState{Address: "10.0.0.1", Port: 80, Weight: 4}, true, "weight 4, want 1"},
		{"weight not set anywhere", false, line, true, runtime.ServerState{Address: "10.0.0.1", Port: 80, Weight: 4}, true, ""},
		{"weight on the line", false, cfgServer{address: "10.0.0.1", port: 80, weight: 3, weighted: true}, true, runtime.ServerState{Address: "10.0.0.1", Port: 80, Weight: 4}, true, "weight 4, want 3"},
		{"maint", false, line, true, runtime.ServerState{Address: "10.0.0.1", Port: 80, Weight: 1, AdminState: runtime.AdminForcedMaint}, true, "state maint, want ready"},
		{"drain is not maint", false, line, true, runtime.ServerState{Address: "10.0.0.1", Port: 80, Weight: 1, AdminState: runtime.AdminForcedDrain}, true, ""},
		{"disabled line", false, cfgServer{address: "10.0.0.1", port: 80, weight: 1, disabled: true}, true, run, true, "state ready, want maint"},
	}
	for _, tt := range tests {
		if got := serverDiff(tt.weightSet, tt.want, tt.inCfg, tt.got, tt.running); got != tt.diff {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.diff)
		}
	}
}

func TestTouchedBy(t *testing.T) {
	ops := []runtime.Op{
		{Operation: &runtime.AddServer{Backend: "b", Server: "s1", Address: "10.0.0.1", Port: 80}},
		{Operation: &runtime.SetServerWeight{Backend: "b", Server: "s1", Weight: 3}},
		{Operation: &runtime.SetServerState{Backend: "b", Server: "s1", State: "ready"}},
		{Operation: &runtime.DelServer{Backend: "c", Server: "s2"}},
		{Operation: &runtime.SetMap{Map: "m1.map", Key: "k", Value: "v"}},
		{Operation: &runtime.ReplaceMap{Map: "m2.map"}},
	}
	got := touchedBy(ops)
	want := touched{
		servers:  map[string]map[string]bool{"b": {"s1": true}, "c": {"s2": false}},
		maps:     map[string]bool{"m1.map": true, "m2.map": true},
		keys:     map[string]map[string]bool{"m1.map": {"k": true}},
		replaced: map[string]bool{"m2.map": true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v", got)
	}
}
