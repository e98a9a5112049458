package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeExec records commands and answers from a table (default: empty reply).
type fakeExec struct {
	cmds    []string
	replies map[string]string // command prefix -> reply
}

func (f *fakeExec) Do(_ context.Context, cmd string) (string, error) {
	f.cmds = append(f.cmds, cmd)
	for p, r := range f.replies {
		if strings.HasPrefix(cmd, p) {
			return r, nil
		}
	}
	return "\n", nil
}

func mapsIn(dir string) MapPath { return func(n string) string { return filepath.Join(dir, n) } }

func TestOpCommands(t *testing.T) {
	ok := map[string]string{
		"add server":          "New server registered.\n\n",
		"del server":          "Server deleted.\n",
		"prepare map":         "New version created: 7\n\n",
		"set server b/s addr": "IP changed from '10.0.0.1' to '10.0.0.2' by 'stats socket command'\n",
	}
	tests := []struct {
		op   Operation
		want []string
	}{
		{&SetMap{Map: "host.map", Key: "a.test", Value: "be_a"}, []string{"set map /m/host.map a.test be_a"}},
		{&AddMap{Map: "host.map", Key: `a;c\`, Value: `x y;z\`}, []string{`add map /m/host.map a\;c\\ x\ y\;z\\`}},
		{&DelMap{Map: "host.map", Key: "a.test"}, []string{"del map /m/host.map a.test"}},
		{&ReplaceMap{Map: "host.map", Entries: []MapEntry{{"a", "1"}, {"b", "2"}}},
			[]string{"prepare map /m/host.map", "add map @7 /m/host.map a 1;add map @7 /m/host.map b 2", "commit map @7 /m/host.map"}},
		{&AddServer{Backend: "be", Server: "s1", Address: "10.0.0.1", Port: 80, Weight: 5},
			[]string{"add server be/s1 10.0.0.1:80 weight 5", "enable server be/s1"}},
		{&AddServer{Backend: "be", Server: "s1", Address: "::1", Port: 80, Check: true},
			[]string{"add server be/s1 [::1]:80 check", "enable health be/s1", "enable server be/s1"}},
		{&AddServer{Backend: "be", Server: "s1", Address: "10.0.0.1", Port: 80, Disabled: true},
			[]string{"add server be/s1 10.0.0.1:80"}},
		{&AddServer{Backend: "be", Server: "s1", Address: "10.0.0.1", Port: 443, Check: true,
			Options: []string{"ssl", "verify", "required", "ca-file", "@system-ca", "sni", "str(a.test)", "crt", "/s/c.pem", "proto", "h2"}},
			[]string{"add server be/s1 10.0.0.1:443 check ssl verify required ca-file @system-ca sni str(a.test) crt /s/c.pem proto h2",
				"enable health be/s1", "enable server be/s1"}},
		{&DelServer{Backend: "be", Server: "s1"}, []string{"set server be/s1 state maint", "del server be/s1"}},
		{&SetServerAddr{Backend: "b", Server: "s", Address: "10.0.0.2", Port: 8080}, []string{"set server b/s addr 10.0.0.2 port 8080"}},
		{&SetServerState{Backend: "b", Server: "s", State: "drain"}, []string{"set server b/s state drain"}},
		{&SetServerWeight{Backend: "b", Server: "s", Weight: 0}, []string{"set server b/s weight 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.op.Kind(), func(t *testing.T) {
			if err := tt.op.Validate(); err != nil {
				t.Fatal(err)
			}
			x := &fakeExec{replies: ok}
			if err := tt.op.Run(context.Background(), x, mapsIn("/m")); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(x.cmds, tt.want) {
				t.Fatalf("commands\n got %q\nwant %q", x.cmds, tt.want)
			}
		})
	}
}

func TestOpErrors(t *testing.T) {
	x := &fakeExec{replies: map[string]string{"add map": "Unknown map identifier. Please use #<id> or <file>.\n\n", "del map": "Key not found.\n", "add server": "Already exists a server with the same name in backend.\n"}}
	err := (&AddMap{Map: "m", Key: "k", Value: "v"}).Run(context.Background(), x, mapsIn("/m"))
	if err == nil || !strings.Contains(err.Error(), "Unknown map identifier") {
		t.Fatalf("add map error: %v", err)
	}
	if err := (&DelMap{Map: "m", Key: "k"}).Run(context.Background(), x, mapsIn("/m")); err != nil {
		t.Fatalf("del of a missing key is done: %v", err)
	}
	if err := (&AddServer{Backend: "b", Server: "s", Address: "10.0.0.1", Port: 1}).Run(context.Background(), x, nil); err == nil {
		t.Fatal("duplicate server accepted")
	}
	invalid := []Operation{
		&SetMap{Map: "../etc/passwd", Key: "k"},
		&AddMap{Map: "m", Key: "a\nb"},
		&AddServer{Backend: "b", Server: "s", Address: "host.example", Port: 80},
		&AddServer{Backend: "b", Server: "s", Address: "10.0.0.1"},
		&AddServer{Backend: "b", Server: "s", Address: "10.0.0.1", Port: 80, Options: []string{"cookie", "x"}},
		&SetSSLCAFile{Path: "/etc/haproxy/ssl/ca.pem", PEM: "-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nB\n-----END PRIVATE KEY-----\n"},
		&SetSSLCAFile{Path: "/etc/haproxy/ssl/ca.pem", PEM: "not PEM"},
		&SetSSLCAFile{Path: "ca.pem", PEM: "-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n"},
		&AddServer{Backend: "b", Server: "s", Address: "10.0.0.1", Port: 80, Options: []string{"sni"}},
		&AddServer{Backend: "b", Server: "s", Address: "10.0.0.1", Port: 80, Options: []string{"sni", "a.test;shutdown sessions"}},
		&AddServer{Backend: "b", Server: "s", Address: "10.0.0.1", Port: 80, Options: []string{"crt", "/a b"}},
		&AddServer{Backend: "b", Server: "s", Address: "10.0.0.1", Port: 80, Options: []string{"crt", "/a\\nb"}},
		&AddServer{Backend: "b", Server: "s", Address: "10.0.0.1", Port: 80, Options: []string{"ssl", "weight", "2"}},
		&SetServerState{Backend: "b", Server: "s", State: "up"},
		&SetServerWeight{Backend: "b", Server: "s", Weight: 300},
		&DelServer{Backend: "b c", Server: "s"},
	}
	for _, op := range invalid {
		if err := op.Validate(); err == nil {
			t.Errorf("%s %+v: valid", op.Kind(), op)
		}
	}
}

func TestReplaceMapBatches(t *testing.T) {
	var entries []MapEntry
	for i := 0; i < 2000; i++ {
		entries = append(entries, MapEntry{Key: fmt.Sprintf("host-%04d.example.test", i), Value: "be_pool_001"})
	}
	lines := batch("add map @1 /etc/haproxy/maps/host.map ", entries)
	if len(lines) < 2 {
		t.Fatalf("%d lines", len(lines))
	}
	n := 0
	for _, l := range lines {
		if len(l) > MaxLine {
			t.Fatalf("line of %d bytes", len(l))
		}
		n += strings.Count(l, ";") + 1
	}
	if n != len(entries) {
		t.Fatalf("%d commands for %d entries", n, len(entries))
	}
}

func TestOpJSON(t *testing.T) {
	in := `[{"op":"add-map","map":"host.map","key":"a","value":"be_a"},
	{"op":"replace-map","map":"path.map","entries":[{"key":"/","value":"be"}]},
	{"op":"add-server","backend":"be","server":"s1","address":"10.0.0.1","port":80,"weight":10},
	{"op":"set-server-state","backend":"be","server":"s1","state":"maint"}]`
	var ops []Op
	if err := json.Unmarshal([]byte(in), &ops); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 4 {
		t.Fatalf("%d ops", len(ops))
	}
	if s, ok := ops[2].Operation.(*AddServer); !ok || s.Weight != 10 || s.Port != 80 {
		t.Fatalf("%#v", ops[2].Operation)
	}
	out, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	var again []Op
	if err := json.Unmarshal(out, &again); err != nil || !reflect.DeepEqual(ops, again) {
		t.Fatalf("round trip: %s %v", out, err)
	}
	for _, bad := range []string{`{"op":"add-backend","name":"x"}`, `{"op":"add-map","map":"m","key":"k","value":"v","bogus":1}`} {
		var op Op
		if err := json.Unmarshal([]byte(bad), &op); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
