package config

import (
	"reflect"
	"strings"
	"testing"
)

// shape is a config without line numbers, for comparisons.
type shape struct {
	Keyword string
	Args    []string
	Lines   [][]string
}

func shapeOf(c *Config) []shape {
	var out []shape
	for _, s := range c.Sections {
		sh := shape{Keyword: s.Keyword, Args: s.Args}
		for _, d := range s.Directives {
			sh.Lines = append(sh.Lines, append([]string{d.Keyword}, d.Args...))
		}
		out = append(out, sh)
	}
	return out
}

func TestParseSectionsAndDirectives(t *testing.T) {
	cfg, err := Parse(`# leading comment
global
    daemon
  maxconn 100 # trailing comment

defaults web
	mode http
frontend fe
    bind :80
    use_backend %[req.hdr(host),lower,map(/maps/host.map)]
backend be_a from web
    server s1 10.0.0.1:80 check
userlist admins
    user admin insecure-password "pa ss"
`)
	if err != nil {
		t.Fatal(err)
	}
	got := shapeOf(cfg)
	want := []shape{
		{"global", []string{}, [][]string{{"daemon"}, {"maxconn", "100"}}},
		{"defaults", []string{"web"}, [][]string{{"mode", "http"}}},
		{"frontend", []string{"fe"}, [][]string{{"bind", ":80"}, {"use_backend", "%[req.hdr(host),lower,map(/maps/host.map)]"}}},
		{"backend", []string{"be_a", "from", "web"}, [][]string{{"server", "s1", "10.0.0.1:80", "check"}}},
		{"userlist", []string{"admins"}, [][]string{{"user", "admin", "insecure-password", "pa ss"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if cfg.Sections[3].Name != "be_a" || cfg.Sections[3].Title() != "backend be_a" || cfg.Sections[0].Title() != "global" {
		t.Fatalf("names: %q %q", cfg.Sections[3].Name, cfg.Sections[0].Title())
	}
	if l := cfg.Sections[0].Directives[1].Line; l != 4 {
		t.Fatalf("maxconn line = %d, want 4", l)
	}
}

func TestParseQuotingAndEscapes(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{`a "b c" d`, []string{"a", "b c", "d"}},
		{`a 'b "c" \n' d`, []string{"a", `b "c" \n`, "d"}},
		{`a "x\"y" z`, []string{"a", `x"y`, "z"}},
		{`a b\ c`, []string{"a", "b c"}},
		{`a "#not comment" # comment`, []string{"a", "#not comment"}},
		{`a \#x`, []string{"a", "#x"}},
		{`a foo"bar baz"qux`, []string{"a", "foobar bazqux"}},
		{`a "" b`, []string{"a", "", "b"}},
		{`a "\x41\t"`, []string{"a", "A\t"}},
		{"\t  a\tb  ", []string{"a", "b"}},
		{`a "$HOME"`, []string{"a", "$HOME"}},
		// As in HAProxy, a backslash that starts no escape stays (regex back-references),
		// also at the end of a line; \$ escapes only inside double quotes.
		{`replace-path (.*) /x\1`, []string{"replace-path", "(.*)", `/x\1`}},
		{`a b\`, []string{"a", `b\`}},
		{`a \$X "\$Y"`, []string{"a", `\$X`, "$Y"}},
		{`a "\'" \'`, []string{"a", "'", "'"}},
		{`http-request set-header X-Forwarded-Proto https if { ssl_fc }`, []string{"http-request", "set-header", "X-Forwarded-Proto", "https", "if", "{", "ssl_fc", "}"}},
	}
	for _, tt := range tests {
		cfg, err := Parse("global\n" + tt.line + "\n")
		if err != nil {
			t.Fatalf("%q: %v", tt.line, err)
		}
		d := cfg.Sections[0].Directives[0]
		got := append([]string{d.Keyword}, d.Args...)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %q want %q", tt.line, got, tt.want)
		}
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	tests := []struct{ text, want string }{
		{"global\n  log \"unterminated\n", "line 2: unterminated double quote"},
		{"global\n\n  x 'open\n", "line 3: unterminated single quote"},
		{"global\n a \\x4", `line 2: invalid or incomplete escape "\\x4" at column 4`},
		{"global\n a \\xzz", `line 2: invalid or incomplete escape "\\xzz" at column 4`},
		{"  maxconn 10\nglobal\n", "line 1: \"maxconn\" outside of any section"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.text, err, tt.want)
		}
	}
}

func TestParsePreprocessorBeforeSections(t *testing.T) {
	cfg, err := Parse(".notice \"hello\"\nglobal\n.if defined(X)\n daemon\n.endif\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sections) != 2 || cfg.Sections[0].Keyword != "" || cfg.Sections[0].Title() != "(top level)" {
		t.Fatalf("sections: %#v", shapeOf(cfg))
	}
	if n := len(cfg.Sections[1].Directives); n != 3 {
		t.Fatalf("global has %d directives, want 3", n)
	}
}

func TestStringRoundTrip(t *testing.T) {
	text := "global\n  a \"b c\" 'd#e' \"\" \"x\\\"y\" \"\\x00\\x7f\\xff\" $V\nbackend be\n  server s 1.2.3.4:80\n"
	cfg, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(cfg.String())
	if err != nil {
		t.Fatalf("reparse %q: %v", cfg.String(), err)
	}
	if !reflect.DeepEqual(shapeOf(cfg), shapeOf(again)) {
		t.Fatalf("round trip changed the config:\n%q", cfg.String())
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"global\n  daemon\n",
		"global\n log stdout format raw local0 # c\n",
		"defaults\n mode http\nbackend b\n server s 10.0.0.1:80 check weight 10\n",
		"frontend f\n http-request set-header X \"a b\\\"c\" if { path_beg /x }\n",
		"frontend f\n acl a 'x y' \\ z \"\\x41\"\n",
		".if defined(X)\nglobal\n.endif\n",
		"global\n a \"unterminated\n",
		"userlist u\n user a password '$6$abc'\r\n",
		"backend b\n\tserver s [::1]:80\n#",
		"global\n \"\" \"#\" '\\'\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := Parse(text)
		if err != nil {
			return
		}
		out := cfg.String()
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of %q failed: %v", out, err)
		}
		if !reflect.DeepEqual(shapeOf(cfg), shapeOf(again)) {
			t.Fatalf("round trip differs:\n%q\n%q", text, out)
		}
	})
}
