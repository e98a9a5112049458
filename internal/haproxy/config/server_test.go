package config

import (
	"reflect"
	"testing"
)

func serverLine(t *testing.T, line string) Server {
	t.Helper()
	cfg, err := Parse("backend be\n    " + line + "\n")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadServer(cfg.Sections[0].Directives[0])
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return s
}

func TestReadServerGroupsOptions(t *testing.T) {
	s := serverLine(t, "server s1 10.0.0.1:80 check cookie weight weight 5 inter 2s foo disabled verify")
	want := []ServerOption{
		{Keyword: "check", Values: []string{}, Known: true},
		{Keyword: "cookie", Values: []string{"weight"}, Known: true}, // "weight" is the cookie's value
		{Keyword: "weight", Values: []string{"5"}, Known: true},
		{Keyword: "inter", Values: []string{"2s"}, Known: true},
		{Keyword: "foo"}, // unknown: read on
		{Keyword: "disabled", Values: []string{}, Known: true},
		{Keyword: "verify", Values: []string{}, Known: true, Incomplete: true},
	}
	if s.Name != "s1" || s.Address != "10.0.0.1:80" || !reflect.DeepEqual(s.Options, want) {
		t.Fatalf("got %s %s %#v", s.Name, s.Address, s.Options)
	}
	if w, ok, err := s.Weight(); w != 5 || !ok || err != nil {
		t.Errorf("Weight = %d %v %v", w, ok, err)
	}
	if !s.Disabled() {
		t.Error("Disabled = false")
	}
}

func TestServerReaders(t *testing.T) {
	tests := []struct {
		line     string
		host     string
		port     int
		addrErr  bool
		weight   int
		weighted bool
		disabled bool
	}{
		{line: "server a 10.0.0.1:80", host: "10.0.0.1", port: 80},
		{line: "server a [::1]:8080 disabled enabled", host: "::1", port: 8080},
		{line: "server a svc.example:80 weight 0", addrErr: true, weighted: true},
		{line: "server a unix@/sock", addrErr: true},
		{line: "server a 10.0.0.1:+1", addrErr: true},
		{line: "server a 10.0.0.1:80-90", addrErr: true},
		{line: "server a 10.0.0.1", addrErr: true},
		{line: "server a 10.0.0.1:80 weight 3 weight 7 disabled", host: "10.0.0.1", port: 80, weight: 7, weighted: true, disabled: true},
	}
	for _, tt := range tests {
		s := serverLine(t, tt.line)
		host, port, err := s.IPPort()
		if (err != nil) != tt.addrErr || host != tt.host || port != tt.port {
			t.Errorf("%s: IPPort = %q %d %v", tt.line, host, port, err)
		}
		w, ok, err := s.Weight()
		if err != nil || ok != tt.weighted || (ok && w != tt.weight) {
			t.Errorf("%s: Weight = %d %v %v", tt.line, w, ok, err)
		}
		if s.Disabled() != tt.disabled {
			t.Errorf("%s: Disabled = %v", tt.line, s.Disabled())
		}
	}
	if _, _, err := serverLine(t, "server a 10.0.0.1:80 weight 257").Weight(); err == nil {
		t.Error("weight 257 must be an error")
	}
	cfg, _ := Parse("backend be\n    server a\n")
	if _, err := ReadServer(cfg.Sections[0].Directives[0]); err == nil {
		t.Error("a server line without an address must be an error")
	}
}

func TestConfigServers(t *testing.T) {
	cfg, err := Parse(`frontend fe
    server nope 10.0.0.3:80
backend be_a
    server a1 10.0.0.1:80
    server-template t 3 10.0.0.9:80
listen li
    server l1 10.0.0.2:81
  backend be_b
    server b1 10.0.0.4:80
`)
	if err != nil {
		t.Fatal(err)
	}
	servers, templated := cfg.Servers()
	names := map[string][]string{}
	for be, byName := range servers {
		for name := range byName {
			names[be] = append(names[be], name)
		}
	}
	want := map[string][]string{"be_a": {"a1"}, "li": {"l1"}, "be_b": {"b1"}}
	if !reflect.DeepEqual(names, want) || !reflect.DeepEqual(templated, map[string]bool{"be_a": true}) {
		t.Fatalf("servers %v templated %v", names, templated)
	}
}

func TestSectionKeywords(t *testing.T) {
	for _, kw := range []string{"global", "defaults", "frontend", "backend", "listen", "crt-store", "traces", "acme", "log-forward"} {
		if !IsSectionKeyword(kw) {
			t.Errorf("%s does not start a section", kw)
		}
	}
	for _, kw := range []string{"server", "bind", "Backend", ""} {
		if IsSectionKeyword(kw) {
			t.Errorf("%q starts a section", kw)
		}
	}
	if !IsProxyKeyword("listen") || IsProxyKeyword("frontend") || !InheritsDefaults("frontend") || InheritsDefaults("global") {
		t.Error("proxy keywords")
	}
}
