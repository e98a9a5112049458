package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

var caps26 = Capabilities{Version: "2.6.12-1+deb12u4", DynamicServers: true, RuntimeMaps: true, SSLRuntime: true, SSLCAFiles: true}

const baseCfg = `global
    stats socket /run/haproxy.sock level admin
defaults
    mode http
    default-server no-check
frontend fe
    bind :80
    use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map)]
    use_backend %[path,map_beg(/etc/haproxy/maps/path.map)] if { path,map_beg(/etc/haproxy/maps/path.map) -m found }
backend be_a
    balance roundrobin
    server s1 10.0.0.1:8080 check
    server s2 10.0.0.2:8080 weight 10
    server s3 10.0.0.3:8080 disabled
backend be_hash
    balance source
    server h1 10.0.1.1:80
backend be_cookie
    cookie SRV insert
    server c1 10.0.2.1:80 cookie c1
backend be_tls
    server t1 10.0.3.1:443 check ssl verify required ca-file /etc/haproxy/ssl/ca.pem sni str(a.test) crt /etc/haproxy/ssl/client.pem proto h2
`

// bundleOf builds a bundle from haproxy.cfg and "kind:name" → content pairs.
func bundleOf(cfg string, files ...string) *bundle.Bundle {
	fs := []bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(cfg)}}
	for i := 0; i+1 < len(files); i += 2 {
		kind, name, _ := strings.Cut(files[i], ":")
		fs = append(fs, bundle.File{Kind: bundle.Kind(kind), Name: name, Content: bundle.TextOf(files[i+1])})
	}
	return bundle.New(fs)
}

// opsJSON renders ops the way the agent receives them, one per line.
func opsJSON(t *testing.T, ops []runtime.Op) []string {
	t.Helper()
	var out []string
	for _, op := range ops {
		b, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func reasonStrings(rs []Reason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.String())
	}
	return out
}

func edit(s string, pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			panic("edit: " + pairs[i] + " not found")
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

const hostMap = "a.test be_a\nb.test be_b\n"
const caPEM = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
const caPEM2 = "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n"
const pathMap = "/api/ be_a\n/static/ be_b\n"

func TestPlan(t *testing.T) {
	run := bundleOf(baseCfg, "map:host.map", hostMap, "map:path.map", pathMap, "file:503.http", "HTTP/1.0 503\r\n\r\n", "cert:site.pem", "PEM1", "crtlist:crt.list", "/c/site.pem\n", "file:ca.pem", caPEM)
	with := func(cfg string, files ...string) *bundle.Bundle {
		base := map[string]string{"map:host.map": hostMap, "map:path.map": pathMap, "file:503.http": "HTTP/1.0 503\r\n\r\n", "cert:site.pem": "PEM1", "crtlist:crt.list": "/c/site.pem\n", "file:ca.pem": caPEM}
		for i := 0; i+1 < len(files); i += 2 {
			base[files[i]] = files[i+1]
		}
		var kv []string
		for _, k := range []string{"map:host.map", "map:path.map", "file:503.http", "cert:site.pem", "crtlist:crt.list", "map:new.map", "file:ca.pem"} {
			if v, ok := base[k]; ok && v != "\x00" {
				kv = append(kv, k, v)
			}
		}
		return bundleOf(cfg, kv...)
	}
	manyAdds := ""
	for i := 0; i < 101; i++ {
		manyAdds += fmt.Sprintf("h%03d.test be_a\n", i)
	}
	tests := []struct {
		name    string
		desired *bundle.Bundle
		caps    Capabilities
		ops     []string
		reasons []string
		files   []string
	}{
		{name: "identical", desired: with(baseCfg), caps: caps26},
		{name: "comment only", desired: with(baseCfg + "# note\n"), caps: caps26, files: []string{"haproxy.cfg"}},
		{name: "server added", caps: caps26,
			desired: with(edit(baseCfg, "    server s3", "    server s4 10.0.0.4:8080 check weight 5\n    server s3")),
			ops:     []string{`{"op":"add-server","backend":"be_a","server":"s4","address":"10.0.0.4","port":8080,"weight":5,"check":true}`},
			files:   []string{"haproxy.cfg"}},
		{name: "server added disabled ipv6", caps: caps26,
			desired: with(edit(baseCfg, "    server s3", "    server s6 [fd00::6]:81 disabled\n    server s3")),
			ops:     []string{`{"op":"add-server","backend":"be_a","server":"s6","address":"fd00::6","port":81,"disabled":true}`},
			files:   []string{"haproxy.cfg"}},
		{name: "server removed", caps: caps26,
			desired: with(edit(baseCfg, "    server s2 10.0.0.2:8080 weight 10\n", "")),
			ops:     []string{`{"op":"del-server","backend":"be_a","server":"s2"}`},
			files:   []string{"haproxy.cfg"}},
		{name: "server address, weight and state", caps: caps26,
			desired: with(edit(baseCfg, "s1 10.0.0.1:8080 check", "s1 10.0.0.9:9090 check", "weight 10", "weight 20", "s3 10.0.0.3:8080 disabled", "s3 10.0.0.3:8080")),
			ops: []string{
				`{"op":"set-server-addr","backend":"be_a","server":"s1","address":"10.0.0.9","port":9090}`,
				`{"op":"set-server-weight","backend":"be_a","server":"s2","weight":20}`,
				`{"op":"set-server-state","backend":"be_a","server":"s3","state":"ready"}`,
			},
			files: []string{"haproxy.cfg"}},
		{name: "weight to zero after map deletes", caps: caps26,
			desired: with(edit(baseCfg, "weight 10", "weight 0"), "map:host.map", "a.test be_a\n"),
			ops: []string{
				`{"op":"del-map","map":"host.map","key":"b.test"}`,
				`{"op":"set-server-weight","backend":"be_a","server":"s2","weight":0}`,
			},
			files: []string{"haproxy.cfg", "map:host.map"}},
		{name: "server disabled", caps: caps26,
			desired: with(edit(baseCfg, "s1 10.0.0.1:8080 check", "s1 10.0.0.1:8080 check disabled")),
			ops:     []string{`{"op":"set-server-state","backend":"be_a","server":"s1","state":"maint"}`},
			files:   []string{"haproxy.cfg"}},
		{name: "server on hash balance", caps: caps26,
			desired: with(edit(baseCfg, "    server h1 10.0.1.1:80\n", "    server h1 10.0.1.1:80\n    server h2 10.0.1.2:80\n")),
			reasons: []string{"backend be_hash: server h2 10.0.1.2:80: added; backend uses balance source; HAProxy needs a dynamic load balancing algorithm for dynamic servers and weights"}},
		{name: "address change on hash balance is fine", caps: caps26,
			desired: with(edit(baseCfg, "h1 10.0.1.1:80", "h1 10.0.1.7:80")),
			ops:     []string{`{"op":"set-server-addr","backend":"be_hash","server":"h1","address":"10.0.1.7","port":80}`},
			files:   []string{"haproxy.cfg"}},
		{name: "server with cookie", caps: caps26,
			desired: with(edit(baseCfg, "c1 10.0.2.1:80 cookie c1", "c1 10.0.2.9:80 cookie c1")),
			reasons: []string{`backend be_cookie: server c1 10.0.2.9:80 cookie c1: changed from server c1 10.0.2.1:80 cookie c1; server option "cookie" is not supported at runtime`}},
		{name: "new server with inter", caps: caps26,
			desired: with(edit(baseCfg, "    server s3", "    server s5 10.0.0.5:80 check inter 3s\n    server s3")),
			ops:     []string{`{"op":"add-server","backend":"be_a","server":"s5","address":"10.0.0.5","port":80,"check":true,"options":["inter","3s"]}`},
			files:   []string{"haproxy.cfg"}},
		{name: "TLS server added", caps: caps26,
			desired: with(edit(baseCfg, "    server t1 10.0.3.1:443", "    server t2 10.0.3.2:443 check ssl verify required ca-file /etc/haproxy/ssl/ca.pem sni str(a.test) crt /etc/haproxy/ssl/client.pem proto h2\n    server t1 10.0.3.1:443")),
			ops: []string{`{"op":"add-server","backend":"be_tls","server":"t2","address":"10.0.3.2","port":443,"check":true,` +
				`"options":["ssl","verify","required","ca-file","/etc/haproxy/ssl/ca.pem","sni","str(a.test)","crt","/etc/haproxy/ssl/client.pem","proto","h2"]}`},
			files: []string{"haproxy.cfg"}},
		{name: "TLS server with a CA HAProxy has not loaded", caps: caps26,
			desired: with(edit(baseCfg, "    server t1 10.0.3.1:443", "    server t2 10.0.3.2:443 ssl verify required ca-file /etc/haproxy/ssl/new.pem\n    server t1 10.0.3.1:443")),
			reasons: []string{"backend be_tls: server t2 10.0.3.2:443 ssl verify required ca-file /etc/haproxy/ssl/new.pem: added; /etc/haproxy/ssl/new.pem is not in the running HAProxy's store (add server does not load files)"}},
		{name: "TLS server with the system CAs", caps: caps26,
			desired: with(edit(baseCfg, "    server t1 10.0.3.1:443", "    server t2 10.0.3.2:443 ssl verify required ca-file @system-ca\n    server t1 10.0.3.1:443")),
			ops:     []string{`{"op":"add-server","backend":"be_tls","server":"t2","address":"10.0.3.2","port":443,"options":["ssl","verify","required","ca-file","@system-ca"]}`},
			files:   []string{"haproxy.cfg"}},
		{name: "server hostname", caps: caps26,
			desired: with(edit(baseCfg, "    server s3", "    server s5 app.svc:80\n    server s3")),
			reasons: []string{`backend be_a: server s5 app.svc:80: added; server address "app.svc:80" is not an IP address and port`}},
		{name: "check option changed", caps: caps26,
			desired: with(edit(baseCfg, "s1 10.0.0.1:8080 check", "s1 10.0.0.1:8080")),
			reasons: []string{"backend be_a: server s1 10.0.0.1:8080: changed from server s1 10.0.0.1:8080 check; only address, port, weight and disabled change at runtime"}},
		{name: "no dynamic servers before 2.6", caps: Capabilities{Version: "2.4.22", RuntimeMaps: true},
			desired: with(edit(baseCfg, "    server s2 10.0.0.2:8080 weight 10\n", "")),
			reasons: []string{"backend be_a: server s2 10.0.0.2:8080 weight 10: removed; del server needs HAProxy 2.6 (running 2.4.22)"}},
		{name: "default-server not inherited", caps: caps26,
			desired: with(edit(strings.Replace(baseCfg, "default-server no-check", "default-server check inter 5s", 1), "    server s3", "    server s5 10.0.0.5:80\n    server s3")),
			reasons: []string{
				`backend be_a: server s5 10.0.0.5:80: added; default-server option "check" (in defaults) is not inherited by dynamic servers`,
				"defaults: default-server check inter 5s: changed from default-server no-check",
			}},
		{name: "directive added", caps: caps26,
			desired: with(edit(baseCfg, "    balance roundrobin\n", "    balance roundrobin\n    http-request set-header X-A b\n", "s1 10.0.0.1:8080", "s1 10.0.0.9:8080")),
			reasons: []string{"backend be_a: http-request set-header X-A b: added"}},
		{name: "directive changed and removed", caps: caps26,
			desired: with(edit(baseCfg, "    mode http\n", "    mode tcp\n", "    stats socket /run/haproxy.sock level admin\n", "")),
			reasons: []string{"defaults: mode tcp: changed from mode http", "global: stats socket /run/haproxy.sock level admin: removed"}},
		{name: "directives moved", caps: caps26,
			desired: with(edit(baseCfg, "    bind :80\n", "", "map_beg(/etc/haproxy/maps/path.map) -m found }\n", "map_beg(/etc/haproxy/maps/path.map) -m found }\n    bind :80\n")),
			reasons: []string{"frontend fe: use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map)]: moved (directive order changed)"}},
		{name: "backend added on 2.6", caps: caps26,
			desired: with(baseCfg + "backend be_new\n    server n1 10.0.9.1:80\n"),
			reasons: []string{"backend be_new: added: add backend needs HAProxy 3.4 (running 2.6.12-1+deb12u4)"}},
		{name: "backend with cookie servers removed", caps: Capabilities{Version: "3.4.0", AddBackend: true, DynamicServers: true, RuntimeMaps: true},
			desired: with(edit(baseCfg, "backend be_cookie\n    cookie SRV insert\n    server c1 10.0.2.1:80 cookie c1\n", "")),
			reasons: []string{`backend be_cookie: server c1 10.0.2.1:80 cookie c1: removed; server option "cookie" is not supported at runtime`}},
		{name: "frontend added", caps: caps26,
			desired: with(baseCfg + "frontend fe2\n    bind :81\n"),
			reasons: []string{"frontend fe2: added"}},
		{name: "map entries", caps: caps26,
			desired: with(baseCfg, "map:host.map", "b.test be_c\nc.test be_a\n# comment\n"),
			ops: []string{
				`{"op":"set-map","map":"host.map","key":"b.test","value":"be_c"}`,
				`{"op":"add-map","map":"host.map","key":"c.test","value":"be_a"}`,
				`{"op":"del-map","map":"host.map","key":"a.test"}`,
			},
			files: []string{"map:host.map"}},
		{name: "map entry value with blanks", caps: caps26,
			desired: with(baseCfg, "map:host.map", hostMap+"c.test\tbe_a  extra \n"),
			ops:     []string{`{"op":"add-map","map":"host.map","key":"c.test","value":"be_a  extra"}`},
			files:   []string{"map:host.map"}},
		{name: "large map diff replaces", caps: caps26,
			desired: with(baseCfg, "map:host.map", manyAdds),
			ops:     []string{`{"op":"replace-map","map":"host.map","entries":[` + replaceEntries(manyAdds) + `]}`},
			files:   []string{"map:host.map"}},
		{name: "order-sensitive map insert replaces", caps: caps26,
			desired: with(baseCfg, "map:path.map", "/api/v2/ be_b\n"+pathMap),
			ops:     []string{`{"op":"replace-map","map":"path.map","entries":[{"key":"/api/v2/","value":"be_b"},{"key":"/api/","value":"be_a"},{"key":"/static/","value":"be_b"}]}`},
			files:   []string{"map:path.map"}},
		{name: "order-sensitive map append is single", caps: caps26,
			desired: with(baseCfg, "map:path.map", pathMap+"/img/ be_a\n"),
			ops:     []string{`{"op":"add-map","map":"path.map","key":"/img/","value":"be_a"}`},
			files:   []string{"map:path.map"}},
		{name: "duplicate keys replace", caps: caps26,
			desired: with(baseCfg, "map:host.map", hostMap+"a.test be_b\n"),
			ops:     []string{`{"op":"replace-map","map":"host.map","entries":[{"key":"a.test","value":"be_a"},{"key":"b.test","value":"be_b"},{"key":"a.test","value":"be_b"}]}`},
			files:   []string{"map:host.map"}},
		{name: "map without runtime maps", caps: Capabilities{Version: "1.8"},
			desired: with(baseCfg, "map:host.map", "a.test be_b\n"),
			reasons: []string{"map:host.map: runtime map updates need HAProxy 1.9 (running 1.8)"}},
		{name: "map added", caps: caps26,
			desired: with(baseCfg, "map:new.map", "x y\n"),
			reasons: []string{"map:new.map: file added (HAProxy opens map files when it parses the configuration)"}},
		{name: "map removed", caps: caps26,
			desired: with(baseCfg, "map:path.map", "\x00"),
			reasons: []string{"map:path.map: file removed (HAProxy opens map files when it parses the configuration)"}},
		{name: "certificate not PEM", caps: caps26,
			desired: with(baseCfg, "cert:site.pem", "PEM2", "crtlist:crt.list", "/c/site.pem [alpn h2]\n"),
			reasons: []string{"cert:site.pem: not expressible at runtime: set-ssl-cert /c/site.pem: content is not PEM"}},
		{name: "certificate without SSL runtime", caps: Capabilities{Version: "2.0", DynamicServers: true, RuntimeMaps: true},
			desired: with(baseCfg, "cert:site.pem", "-----BEGIN X-----\n"),
			reasons: []string{"cert:site.pem: certificate changed; runtime SSL updates need HAProxy 2.2 (running 2.0)"}},
		{name: "error page", caps: caps26,
			desired: with(baseCfg, "file:503.http", "HTTP/1.0 503\r\n\r\nbusy"),
			reasons: []string{"file:503.http: file content changed"}},
		{name: "CA file a server uses changed", caps: caps26,
			desired: with(baseCfg, "file:ca.pem", caPEM2),
			ops:     []string{`{"op":"set-ssl-ca-file","path":"/etc/haproxy/ssl/ca.pem","pem":` + strconv.Quote(caPEM2) + `}`},
			files:   []string{"file:ca.pem"}},
		{name: "CA file changed before 2.5", caps: Capabilities{Version: "2.4.22", RuntimeMaps: true, SSLRuntime: true},
			desired: with(baseCfg, "file:ca.pem", caPEM2),
			reasons: []string{"file:ca.pem: file content changed"}},
		{name: "reload drops ops", caps: caps26,
			desired: with(edit(baseCfg, "s1 10.0.0.1:8080", "s1 10.0.0.9:8080"), "file:503.http", "x"),
			reasons: []string{"file:503.http: file content changed"}},
		{name: "desired config does not parse", caps: caps26,
			desired: with(baseCfg + "    log \"x\n"),
			reasons: []string{"haproxy.cfg: desired: parse haproxy.cfg line 23: unterminated double quote at column 9"}},
		{name: "servers and maps in safe order", caps: caps26,
			desired: with(edit(baseCfg,
				"    server s1 10.0.0.1:8080 check\n", "    server s0 10.0.0.10:8080\n",
				"s3 10.0.0.3:8080 disabled", "s3 10.0.0.3:8080"),
				"map:host.map", "c.test be_a\n"),
			ops: []string{
				`{"op":"add-server","backend":"be_a","server":"s0","address":"10.0.0.10","port":8080}`,
				`{"op":"set-server-state","backend":"be_a","server":"s3","state":"ready"}`,
				`{"op":"add-map","map":"host.map","key":"c.test","value":"be_a"}`,
				`{"op":"del-map","map":"host.map","key":"a.test"}`,
				`{"op":"del-map","map":"host.map","key":"b.test"}`,
				`{"op":"del-server","backend":"be_a","server":"s1"}`,
			},
			files: []string{"haproxy.cfg", "map:host.map"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Plan(Running{Bundle: run}, tt.desired, tt.caps)
			if got := opsJSON(t, res.Ops); !reflect.DeepEqual(got, tt.ops) {
				t.Errorf("ops:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tt.ops, "\n     "))
			}
			if got := reasonStrings(res.Reasons); !reflect.DeepEqual(got, tt.reasons) {
				t.Errorf("reasons:\n got %q\nwant %q", got, tt.reasons)
			}
			if res.Reload != (len(tt.reasons) > 0) {
				t.Errorf("reload = %v with reasons %q", res.Reload, tt.reasons)
			}
			var files []string
			for _, f := range res.Files {
				files = append(files, f.Target())
				if want, _ := tt.desired.Get(f.Target()); want.Content.String() != f.Content.String() {
					t.Errorf("file %s is not the desired content", f.Target())
				}
			}
			if !reflect.DeepEqual(files, tt.files) {
				t.Errorf("files: got %q want %q", files, tt.files)
			}
			for _, op := range res.Ops {
				if err := op.Validate(); err != nil {
					t.Errorf("op does not validate: %v", err)
				}
			}
			again := Plan(Running{Bundle: run}, tt.desired, tt.caps)
			if !reflect.DeepEqual(res, again) {
				t.Errorf("second run differs")
			}
		})
	}
}

func replaceEntries(mapText string) string {
	var parts []string
	for _, e := range runtime.ParseMapFile(mapText) {
		b, _ := json.Marshal(e)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, ",")
}

func TestPlanDefaultServerInBackend(t *testing.T) {
	cfg := "defaults\n    mode http\nbackend be\n    default-server inter 3s\n    server a 10.0.0.1:80\n"
	run := bundleOf(cfg)
	res := Plan(Running{Bundle: run}, bundleOf(cfg+"    server b 10.0.0.2:80\n"), caps26)
	want := []string{`backend be: server b 10.0.0.2:80: added; default-server option "inter" (in backend be) is not inherited by dynamic servers`}
	if got := reasonStrings(res.Reasons); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	// Removing a server does not depend on default-server.
	res = Plan(Running{Bundle: run}, bundleOf(strings.Replace(cfg, "    server a 10.0.0.1:80\n", "", 1)), caps26)
	if res.Reload || len(res.Ops) != 1 {
		t.Fatalf("remove: %+v", res)
	}
}

func TestPlanBalanceFromDefaults(t *testing.T) {
	cfg := "defaults d\n    balance uri\nbackend be from d\n    server a 10.0.0.1:80\n"
	res := Plan(Running{Bundle: bundleOf(cfg)}, bundleOf(cfg+"    server b 10.0.0.2:80\n"), caps26)
	if !res.Reload || !strings.Contains(res.Reasons[0].Detail, "balance uri") {
		t.Fatalf("got %+v", res)
	}
	chained := "defaults d\n    balance source\ndefaults e from d\n    mode http\nbackend be from e\n    server a 10.0.0.1:80\n"
	res = Plan(Running{Bundle: bundleOf(chained)}, bundleOf(chained+"    server b 10.0.0.2:80\n"), caps26)
	if !res.Reload || !strings.Contains(res.Reasons[0].Detail, "balance source") {
		t.Fatalf("chained defaults: got %+v", res)
	}
	moved := "defaults d\n    balance uri\ndefaults e\n    balance roundrobin\nbackend be from e\n    server a 10.0.0.1:80\n"
	res = Plan(Running{Bundle: bundleOf(strings.Replace(moved, "from e", "from d", 1))}, bundleOf(moved), caps26)
	if got := reasonStrings(res.Reasons); len(got) != 2 || got[1] != "backend be: backend be from e: section header changed" ||
		got[0] != "backend be: inherits from a different defaults section" {
		t.Fatalf("got %q", got)
	}
}

func TestPlanNilBundles(t *testing.T) {
	desired := bundleOf(baseCfg)
	if res := Plan(Running{}, desired, caps26); !res.Reload || len(res.Reasons) != 1 {
		t.Fatalf("nothing running: %+v", res)
	}
	if res := Plan(Running{Bundle: desired}, nil, caps26); res.Reload || len(res.Ops) != 0 {
		t.Fatalf("nothing desired: %+v", res)
	}
}

func TestCapabilitiesFor(t *testing.T) {
	c, err := CapabilitiesFor("2.6.12-1+deb12u4")
	if err != nil {
		t.Fatal(err)
	}
	want := Capabilities{Version: "2.6.12-1+deb12u4", DynamicServers: true, RuntimeMaps: true, SSLRuntime: true, SSLCAFiles: true}
	if c != want {
		t.Fatalf("got %+v", c)
	}
	if _, err := CapabilitiesFor("banana"); err == nil {
		t.Fatal("no error for a bad version")
	}
}

// TestPlanDeterministic shuffles nothing by hand: it relies on many backends and map
// keys so that any map iteration leaking into the output would show across runs.
func TestPlanDeterministic(t *testing.T) {
	run, desired := bigBundles(300, 300, 40)
	first := Plan(Running{Bundle: run}, desired, caps26)
	if first.Reload || len(first.Ops) == 0 {
		t.Fatalf("unexpected result: reload=%v reasons=%v", first.Reload, first.Reasons)
	}
	for i := 0; i < 20; i++ {
		if again := Plan(Running{Bundle: run}, desired, caps26); !reflect.DeepEqual(first, again) {
			t.Fatalf("run %d differs", i)
		}
	}
	structural := bundleOf(edit(desired.Config().Content.String(), "balance roundrobin", "balance source"), "map:host.map", "x y\n")
	first = Plan(Running{Bundle: run}, structural, caps26)
	for i := 0; i < 20; i++ {
		if again := Plan(Running{Bundle: run}, structural, caps26); !reflect.DeepEqual(first, again) {
			t.Fatalf("reload run %d differs", i)
		}
	}
}

func TestPlanListenAndNonProxyServers(t *testing.T) {
	cfg := "listen stats\n    bind :9000\n    server a 10.0.0.1:80\nring logs\n    server r1 10.0.0.5:514\n"
	res := Plan(Running{Bundle: bundleOf(cfg)}, bundleOf(strings.Replace(cfg, "10.0.0.1:80", "10.0.0.2:80", 1)), caps26)
	want := []string{`{"op":"set-server-addr","backend":"stats","server":"a","address":"10.0.0.2","port":80}`}
	if got := opsJSON(t, res.Ops); !reflect.DeepEqual(got, want) {
		t.Fatalf("listen: got %q", got)
	}
	// A ring's server line is not a proxy server: any change reloads.
	res = Plan(Running{Bundle: bundleOf(cfg)}, bundleOf(strings.Replace(cfg, "10.0.0.5:514", "10.0.0.6:514", 1)), caps26)
	if got := reasonStrings(res.Reasons); len(got) != 1 || !strings.HasPrefix(got[0], "ring logs: server r1 10.0.0.6:514: changed from") {
		t.Fatalf("ring: got %q", got)
	}
}

func TestPlanRunningConfigDoesNotParse(t *testing.T) {
	run := bundleOf("global\n  log 'x\n")
	res := Plan(Running{Bundle: run}, bundleOf(baseCfg), caps26)
	want := []string{"haproxy.cfg: running: parse haproxy.cfg line 2: unterminated single quote at column 7"}
	if got := reasonStrings(res.Reasons); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestPlanManyServersChanged(t *testing.T) {
	run, desired := bigBundles(2000, 10, 2000)
	res := Plan(Running{Bundle: run}, desired, caps26)
	if res.Reload || len(res.Ops) != 2000+10 {
		t.Fatalf("want 2010 ops, got %d (reasons %v)", len(res.Ops), res.Reasons)
	}
}

// FuzzPlan feeds arbitrary configs and maps: Plan must never panic, must be
// deterministic, must never return both operations and a reload, and planning again
// from the state it leaves must change nothing.
func FuzzPlan(f *testing.F) {
	f.Add(baseCfg, edit(baseCfg, "s1 10.0.0.1:8080", "s1 10.0.0.9:8080"), hostMap, "c.test be_a\n")
	f.Add("backend b\n server s 1.2.3.4:80\n", "backend b\n server s 1.2.3.4:80 weight\n", "", "k")
	f.Add("backend b\n server\n", "backend b\n server s [::1]:0\n server s x\n", "a b\na c\n", "a")
	f.Fuzz(func(t *testing.T, runCfg, wantCfg, runMap, wantMap string) {
		run := bundleOf(runCfg, "map:host.map", runMap)
		desired := bundleOf(wantCfg, "map:host.map", wantMap)
		res := Plan(Running{Bundle: run}, desired, caps26)
		if res.Reload && (len(res.Ops) > 0 || len(res.Files) > 0) {
			t.Fatalf("reload with ops or files: %+v", res)
		}
		if !res.Reload && len(res.Reasons) > 0 {
			t.Fatalf("reasons without reload: %+v", res)
		}
		for _, op := range res.Ops {
			if err := op.Validate(); err != nil {
				t.Fatalf("invalid op %v: %v", op, err)
			}
		}
		if again := Plan(Running{Bundle: run}, desired, caps26); !reflect.DeepEqual(res, again) {
			t.Fatal("not deterministic")
		}
		if !res.Reload && res.Running != nil {
			if next := Plan(*res.Running, desired, caps26); next.Reload || len(next.Ops) > 0 {
				t.Fatalf("planning again from the resulting state is not a no-op: %+v", next)
			}
		}
	})
}

func TestPlanQuotingIsNotAChange(t *testing.T) {
	run := bundleOf("frontend fe\n    http-request set-header X-A \"b\" # why\n")
	desired := bundleOf("frontend fe\n\thttp-request   set-header 'X-A' b\n")
	res := Plan(Running{Bundle: run}, desired, caps26)
	if res.Reload || len(res.Ops) != 0 || len(res.Files) != 1 {
		t.Fatalf("got %+v", res)
	}
}

// TestMapMatchTypes: how the configuration text looks a map up, without parsing it.
func TestMapMatchTypes(t *testing.T) {
	tests := []struct {
		cfg   string
		types string // sorted, comma-separated; "?" for unknown
	}{
		{"frontend f\n use_backend %[req.hdr(host),map(/m/host.map)]\n", ""},
		{"frontend f\n use_backend %[req.hdr(host),map_str(/m/host.map,be_x)]\n", "str"},
		{"frontend f\n use_backend %[path,map_beg(/m/host.map)]\n use_backend %[path,map(/m/host.map)]\n", ",beg"},
		{"frontend f\n use_backend %[path,map_reg_str(/m/host.map)]\n", "reg"},
		{"frontend f\n acl known hdr(host) -f /m/host.map -M\n", "?"},
		{"frontend f\n http-request set-var(txn.x) str('/m/host.map')\n", "?"},
		{"frontend f\n use_backend %[path,map_beg(/m/vhost.map)]\n", "none"},
		{"frontend f\n # acl known hdr(host) -f /m/host.map\n bind :80\n", "none"},
		{"frontend f\n bind :80\n", "none"},
	}
	for _, tt := range tests {
		types, known := mapMatchTypes("host.map", tt.cfg)
		got := "?"
		if known {
			got = strings.Join(slices.Sorted(maps.Keys(types)), ",")
			if len(types) == 0 {
				got = "none"
			}
		}
		if got != tt.types {
			t.Errorf("%q: got %q want %q", tt.cfg, got, tt.types)
		}
	}
}

// TestPrefixOrderKept: appended entries are as good as in place unless a key
// that is a prefix of theirs (or that theirs prefixes) ends up on the other side.
func TestPrefixOrderKept(t *testing.T) {
	es := func(keys ...string) []runtime.MapEntry {
		var out []runtime.MapEntry
		for _, k := range keys {
			out = append(out, runtime.MapEntry{Key: k, Value: "v"})
		}
		return out
	}
	tests := []struct {
		name      string
		got, want []runtime.MapEntry
		ok        bool
	}{
		{"a route appended", es("h1/a/", "h2/b/", "h1/", "h2/", "h3/c/", "h3/"), es("h1/a/", "h2/b/", "h3/c/", "h1/", "h2/", "h3/"), true},
		{"appended after its own prefix", es("h1/a/", "h1/", "h1/a/b/"), es("h1/a/b/", "h1/a/", "h1/"), false},
		{"appended before a key it prefixes", es("h1/a/b/", "h1/"), es("h1/", "h1/a/b/"), false},
		{"kept entries reordered", es("x/", "y/", "x/1/"), es("y/", "x/1/", "x/"), false},
		{"same order", es("a", "b"), es("a", "b"), true},
	}
	for _, tt := range tests {
		if got := prefixOrderKept(tt.got, tt.want); got != tt.ok {
			t.Errorf("%s: got %v want %v", tt.name, got, tt.ok)
		}
	}
}

// TestPlanRouteInBegMap: a route's entries sorted into the middle of a map_beg map
// (longest prefix first) are two add map operations, not a replacement of the
// map, and a note comment in haproxy.cfg changes nothing for HAProxy.
func TestPlanRouteInBegMap(t *testing.T) {
	cfg := func(note string) bundle.File {
		return bundle.File{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf("frontend f\n    bind :80\n" +
			"    http-request set-var(txn.route) var(txn.key),map_beg(/etc/haproxy/maps/path-prefix.map)\n" + note)}
	}
	pm := func(keys ...string) bundle.File {
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(k + " r\n")
		}
		return bundle.File{Kind: bundle.KindMap, Name: "path-prefix.map", Content: bundle.TextOf(b.String())}
	}
	run := bundle.New([]bundle.File{cfg("# route 1: note\n"), pm("g/1.example.com/1/", "g/3.example.com/3/", "g/1.example.com/", "g/3.example.com/")})
	desired := bundle.New([]bundle.File{cfg("# route 1: note\n# route 2: note\n"),
		pm("g/1.example.com/1/", "g/2.example.com/2/", "g/3.example.com/3/", "g/1.example.com/", "g/2.example.com/", "g/3.example.com/")})
	res := Plan(Running{Bundle: run}, desired, caps26)
	if res.Reload || len(res.Ops) != 2 {
		t.Fatalf("want 2 add map ops, got reload=%v ops=%v reasons=%v", res.Reload, res.Ops, res.Reasons)
	}
	for _, op := range res.Ops {
		if _, ok := op.Operation.(*runtime.AddMap); !ok {
			t.Fatalf("op %T, want add map", op.Operation)
		}
	}
	// A new key that an existing, earlier key prefixes must keep the desired order.
	desired = bundle.New([]bundle.File{cfg(""), pm("g/1.example.com/1/x/", "g/1.example.com/1/", "g/3.example.com/3/", "g/1.example.com/", "g/3.example.com/")})
	res = Plan(Running{Bundle: run}, desired, caps26)
	if res.Reload || len(res.Ops) != 1 {
		t.Fatalf("want one replace, got reload=%v ops=%v", res.Reload, res.Ops)
	}
	if _, ok := res.Ops[0].Operation.(*runtime.ReplaceMap); !ok {
		t.Fatalf("op %T, want replace map", res.Ops[0].Operation)
	}
}

// TestSameWithoutCommentLines: whole comment lines do not count; anything else does.
func TestSameWithoutCommentLines(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"a\n# x\nb\n", "a\nb\n  # y\n", true},
		{"a\nb\n", "a\nb # z\n", false},
		{"a\n", "a\nc\n", false},
		{"", "# only\n", true},
	} {
		if got := sameWithoutCommentLines(bundle.TextOf(c.a), bundle.TextOf(c.b)); got != c.same {
			t.Errorf("%q vs %q: %v", c.a, c.b, got)
		}
	}
}

// TestBindCAFileReloads: a CA file a bind verifies clients with reloads when it
// changes (HAProxy 2.6's commit would keep listing the old CA names to clients);
// one only servers use is replaced at runtime.
func TestBindCAFileReloads(t *testing.T) {
	cfg := edit(baseCfg, "    bind :80\n", "    bind :80\n    bind :443 ssl crt /c/site.pem ca-file /etc/haproxy/ssl/ca.pem verify required\n")
	run := bundleOf(cfg, "file:ca.pem", caPEM)
	res := Plan(Running{Bundle: run}, bundleOf(cfg, "file:ca.pem", caPEM2), caps26)
	if got := reasonStrings(res.Reasons); !res.Reload || fmt.Sprint(got) != "[file:ca.pem: file content changed]" {
		t.Fatalf("reload %v, reasons %q", res.Reload, got)
	}
}
