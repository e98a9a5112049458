package plan

import (
	"reflect"
	"strings"
	"testing"
)

const poolCfg = `defaults
    mode http
frontend fe
    bind :80
    use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map)]
backend be_a
    server a1 10.0.0.1:80 check
backend haptic_pool_000
backend haptic_pool_001
`

// TestPoolRouteLifecycle follows one pod through route add, endpoint change, a
// second add, removal and re-add, checking that nothing reloads and that each
// step's Running feeds the next.
func TestPoolRouteLifecycle(t *testing.T) {
	running := Running{Bundle: bundleOf(poolCfg, "map:host.map", "a.test be_a\n")}
	step := func(name, cfg, hostMap string, wantOps []string, wantAliases map[string]string) {
		t.Helper()
		res := Plan(running, bundleOf(cfg, "map:host.map", hostMap), caps26)
		if res.Reload {
			t.Fatalf("%s: reload: %q", name, reasonStrings(res.Reasons))
		}
		if got := opsJSON(t, res.Ops); !reflect.DeepEqual(got, wantOps) {
			t.Fatalf("%s: ops:\n got %s\nwant %s", name, strings.Join(got, "\n     "), strings.Join(wantOps, "\n     "))
		}
		if !reflect.DeepEqual(res.Running.Aliases, wantAliases) {
			t.Fatalf("%s: aliases %v, want %v", name, res.Running.Aliases, wantAliases)
		}
		if again := Plan(*res.Running, bundleOf(cfg, "map:host.map", hostMap), caps26); again.Reload || len(again.Ops) != 0 || len(again.Files) != 0 {
			t.Fatalf("%s: planning the same desired state again is not a no-op: %+v", name, again)
		}
		running = *res.Running
	}
	withC := poolCfg + "backend be_c\n    server c1 10.0.0.3:80 check\n"
	step("add be_c", withC, "a.test be_a\nc.test be_c\n", []string{
		`{"op":"add-server","backend":"haptic_pool_000","server":"c1","address":"10.0.0.3","port":80,"check":true}`,
		`{"op":"add-map","map":"host.map","key":"c.test","value":"haptic_pool_000"}`,
	}, map[string]string{"be_c": "haptic_pool_000"})
	if cfg, _ := running.Bundle.Get("haproxy.cfg"); strings.Contains(cfg.Content.String(), "be_c") || strings.Count(cfg.Content.String(), "backend haptic_pool_000") != 1 {
		t.Fatalf("running config should serve be_c as haptic_pool_000 once:\n%s", cfg.Content.String())
	}
	if m, _ := running.Bundle.Get("map:host.map"); m.Content.String() != "a.test be_a\nc.test haptic_pool_000\n" {
		t.Fatalf("running host.map = %q", m.Content.String())
	}

	withC2 := strings.Replace(withC, "10.0.0.3:80", "10.0.0.4:80", 1)
	step("move be_c's server", withC2, "a.test be_a\nc.test be_c\n", []string{
		`{"op":"set-server-addr","backend":"haptic_pool_000","server":"c1","address":"10.0.0.4","port":80}`,
	}, map[string]string{"be_c": "haptic_pool_000"})

	withCD := withC2 + "backend be_d\n    server d1 10.0.0.5:80 check\n"
	step("add be_d", withCD, "a.test be_a\nc.test be_c\nd.test be_d\n", []string{
		`{"op":"add-server","backend":"haptic_pool_001","server":"d1","address":"10.0.0.5","port":80,"check":true}`,
		`{"op":"add-map","map":"host.map","key":"d.test","value":"haptic_pool_001"}`,
	}, map[string]string{"be_c": "haptic_pool_000", "be_d": "haptic_pool_001"})

	// be_a goes: its map entry first, then its server; the empty be_a stays as a spare.
	withoutA := strings.Replace(withCD, "backend be_a\n    server a1 10.0.0.1:80 check\n", "", 1)
	step("remove be_a", withoutA, "c.test be_c\nd.test be_d\n", []string{
		`{"op":"del-map","map":"host.map","key":"a.test"}`,
		`{"op":"del-server","backend":"be_a","server":"a1"}`,
	}, map[string]string{"be_c": "haptic_pool_000", "be_d": "haptic_pool_001"})

	// The pool is used up; a new backend takes the spare be_a.
	withE := withoutA + "backend be_e\n    server e1 10.0.0.6:80 check\n"
	step("add be_e into the spare be_a", withE, "c.test be_c\nd.test be_d\ne.test be_e\n", []string{
		`{"op":"add-server","backend":"be_a","server":"e1","address":"10.0.0.6","port":80,"check":true}`,
		`{"op":"add-map","map":"host.map","key":"e.test","value":"be_a"}`,
	}, map[string]string{"be_c": "haptic_pool_000", "be_d": "haptic_pool_001", "be_e": "be_a"})

	// No spare left: the next new backend reloads, naming the backend.
	withF := withE + "backend be_f\n    server f1 10.0.0.7:80 check\n"
	res := Plan(running, bundleOf(withF, "map:host.map", "c.test be_c\nd.test be_d\ne.test be_e\nf.test be_f\n"), caps26)
	if !res.Reload || len(res.Reasons) != 1 || res.Reasons[0].Section != "backend be_f" {
		t.Fatalf("pool used up: want one reload reason for backend be_f, got %+v", res)
	}

	// be_c goes away: its pool backend is emptied and serves be_f.
	withoutC := strings.Replace(withF, "backend be_c\n    server c1 10.0.0.4:80 check\n", "", 1)
	res = Plan(running, bundleOf(withoutC, "map:host.map", "d.test be_d\ne.test be_e\nf.test be_f\n"), caps26)
	if !res.Reload {
		t.Fatalf("a pool backend with servers is not a spare until it is empty: want reload, got %+v", res.Ops)
	}
}

// TestPoolNotPlain: a new backend whose directives differ from every spare reloads.
func TestPoolNotPlain(t *testing.T) {
	running := Running{Bundle: bundleOf(poolCfg, "map:host.map", "a.test be_a\n")}
	desired := bundleOf(poolCfg+"backend be_z\n    compression algo gzip\n    server z1 10.0.0.9:80\n", "map:host.map", "a.test be_a\nz.test be_z\n")
	res := Plan(running, desired, caps26)
	if !res.Reload || reasonStrings(res.Reasons)[0] != "backend be_z: added: add backend needs HAProxy 3.4 (running 2.6.12-1+deb12u4)" {
		t.Fatalf("want a reload naming be_z, got %+v", res)
	}
}

// TestPoolAliasesAfterReload: after a reload the pod runs the desired names again.
func TestPoolAliasesAfterReload(t *testing.T) {
	cfg := poolCfg + "backend be_c\n    server c1 10.0.0.3:80 check\n"
	desired := bundleOf(cfg, "map:host.map", "a.test be_a\nc.test be_c\n")
	res := Plan(Running{Bundle: desired, Aliases: map[string]string{"be_c": "haptic_pool_000"}}, desired, caps26)
	if res.Reload || len(res.Ops) != 0 || res.Running.Aliases != nil {
		t.Fatalf("stale aliases must not apply to a pod that runs the desired names: %+v", res)
	}
}

func TestTranslateMap(t *testing.T) {
	aliases := map[string]string{"be_c": "haptic_pool_000"}
	in := "a.test be_c\nbe_c no-compress\nbe_c/x-hdr v\nbe_cc/x keep\n# be_c\nother be_a\n"
	want := "a.test haptic_pool_000\nhaptic_pool_000 no-compress\nhaptic_pool_000/x-hdr v\nbe_cc/x keep\n# be_c\nother be_a\n"
	if got := translateMap(in, aliases); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

const sslCfg = `frontend fe
    bind :443 ssl crt-list /etc/haproxy/ssl/ingress.crt-list
    use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map)]
`

// TestPlanSSL: certificates and crt-list lines change at runtime; the default
// certificate (first line) and a certificate on two lines reload.
func TestPlanSSL(t *testing.T) {
	const a, b = "-----BEGIN CERTIFICATE-----\na\n", "-----BEGIN CERTIFICATE-----\nb\n"
	running := Running{Bundle: bundleOf(sslCfg, "cert:a.pem", a, "crtlist:ingress.crt-list", "/etc/haproxy/ssl/a.pem a.test\n")}
	tests := []struct {
		name    string
		files   []string
		ops     []string
		reasons []string
	}{
		{name: "new certificate and SNI line",
			files: []string{"cert:a.pem", a, "cert:b.pem", b, "crtlist:ingress.crt-list", "/etc/haproxy/ssl/a.pem a.test\n/etc/haproxy/ssl/b.pem b.test\n"},
			ops: []string{
				`{"op":"set-ssl-cert","path":"/etc/haproxy/ssl/b.pem","pem":"-----BEGIN CERTIFICATE-----\nb\n","new":true}`,
				`{"op":"add-crt-list-entry","crtList":"/etc/haproxy/ssl/ingress.crt-list","line":"/etc/haproxy/ssl/b.pem b.test"}`,
			}},
		{name: "renewed certificate",
			files: []string{"cert:a.pem", b, "crtlist:ingress.crt-list", "/etc/haproxy/ssl/a.pem a.test\n"},
			ops:   []string{`{"op":"set-ssl-cert","path":"/etc/haproxy/ssl/a.pem","pem":"-----BEGIN CERTIFICATE-----\nb\n"}`}},
		{name: "default certificate changes",
			files:   []string{"cert:a.pem", a, "crtlist:ingress.crt-list", "/etc/haproxy/ssl/a.pem a.test www.a.test\n"},
			reasons: []string{"crtlist:ingress.crt-list: the first line (the default certificate) changed"}},
		{name: "certificate on two lines",
			files:   []string{"cert:a.pem", a, "crtlist:ingress.crt-list", "/etc/haproxy/ssl/a.pem a.test\n/etc/haproxy/ssl/a.pem www.a.test\n"},
			reasons: []string{"crtlist:ingress.crt-list: a certificate is on several lines"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Plan(running, bundleOf(sslCfg, tt.files...), caps26)
			if got := opsJSON(t, res.Ops); !reflect.DeepEqual(got, tt.ops) {
				t.Errorf("ops:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tt.ops, "\n     "))
			}
			if got := reasonStrings(res.Reasons); !reflect.DeepEqual(got, tt.reasons) {
				t.Errorf("reasons: got %q want %q", got, tt.reasons)
			}
		})
	}
	// A removed route's line goes; its certificate stays in the store (and on disk)
	// until the next reload, so planning the same state again is a no-op.
	two := Running{Bundle: bundleOf(sslCfg, "cert:a.pem", a, "cert:b.pem", b, "crtlist:ingress.crt-list", "/etc/haproxy/ssl/a.pem a.test\n/etc/haproxy/ssl/b.pem b.test\n")}
	desired := bundleOf(sslCfg, "cert:a.pem", a, "crtlist:ingress.crt-list", "/etc/haproxy/ssl/a.pem a.test\n")
	res := Plan(two, desired, caps26)
	if got := opsJSON(t, res.Ops); res.Reload || !reflect.DeepEqual(got, []string{`{"op":"del-crt-list-entry","crtList":"/etc/haproxy/ssl/ingress.crt-list","cert":"/etc/haproxy/ssl/b.pem"}`}) {
		t.Fatalf("removal: %v %q", got, reasonStrings(res.Reasons))
	}
	if _, ok := res.Running.Bundle.Get("cert:b.pem"); !ok {
		t.Fatal("the removed certificate must stay in what runs")
	}
	if again := Plan(*res.Running, desired, caps26); again.Reload || len(again.Ops) != 0 {
		t.Fatalf("again: %+v", again)
	}
}
