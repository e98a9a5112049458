package validate

import (
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

func TestNeedsFullCheck(t *testing.T) {
	layout := bundle.Layout{ConfigFile: "/etc/haproxy/haproxy.cfg", MapsDir: "/etc/haproxy/maps", SSLCertsDir: "/etc/haproxy/certs", GeneralStorageDir: "/etc/haproxy/general"}
	cfg := `frontend f
    http-request set-var(txn.r) var(txn.k),map_beg(/etc/haproxy/maps/prefix.map)
    http-request set-var(txn.r) var(txn.k),map_reg(/etc/haproxy/maps/regex.map)
    http-request set-var(txn.n) var(txn.k),map_str_int(/etc/haproxy/maps/rate.map)
    http-request set-var(txn.r) var(txn.k),map(/etc/haproxy/maps/host.map)
`
	mk := func(cfg string, maps map[string]string) *bundle.Bundle {
		files := []bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(cfg)}}
		for n, c := range maps {
			files = append(files, bundle.File{Kind: bundle.KindMap, Name: n, Content: bundle.TextOf(c)})
		}
		return bundle.New(files)
	}
	base := map[string]string{"prefix.map": "a/ x\n", "regex.map": "^a x\n", "rate.map": "x 1\n", "host.map": "a a\n"}
	prev := mk(cfg, base)
	with := func(name, content string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		m[name] = content
		return m
	}
	for name, tc := range map[string]struct {
		next *bundle.Bundle
		full bool
	}{
		"identical":         {mk(cfg, base), false},
		"string map entry":  {mk(cfg, with("prefix.map", "a/ x\nb/ y\n")), false},
		"exact map entry":   {mk(cfg, with("host.map", "a a\nb b\n")), false},
		"regex map entry":   {mk(cfg, with("regex.map", "^a x\n(b y\n")), true},
		"integer map entry": {mk(cfg, with("rate.map", "x 1\ny two\n")), true},
		"config changed":    {mk(cfg+"backend b\n", base), true},
		"comment added":     {mk("# HTTPRoute default/r: backend default/x port 80 is not resolved\n"+cfg, with("prefix.map", "a/ x\nb/ y\n")), false},
		"comment and regex": {mk("# a note\n"+cfg, with("regex.map", "^a x\n(b y\n")), true},
		"map added":         {mk(cfg, with("new.map", "k v\n")), true},
	} {
		full, why := NeedsFullCheck(prev, tc.next, layout)
		if full != tc.full {
			t.Errorf("%s: full check %v (%s), want %v", name, full, why, tc.full)
		}
	}
	if full, _ := NeedsFullCheck(nil, prev, layout); !full {
		t.Error("no previous bundle: want the full check")
	}
}
