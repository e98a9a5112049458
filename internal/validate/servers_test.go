package validate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/bundle/bundletest"
)

const serversCfg = `global
    maxconn 100
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:18080
    default_backend be_a
backend be_a
    balance roundrobin
    server srv_1 10.0.0.1:8080 check
    server srv_2 10.0.0.2:8080 check
backend be_b
    server srv_1 10.0.1.1:80 check weight 10
backend be_empty
    balance roundrobin
`

func TestServersOnly(t *testing.T) {
	edit := func(old, new string) string { return strings.Replace(serversCfg, old, new, 1) }
	for name, tc := range map[string]struct {
		next string
		want bool
	}{
		"endpoint moved":                 {edit("srv_2 10.0.0.2:8080", "srv_3 10.0.0.3:8080"), true},
		"endpoint added":                 {edit("    server srv_2 10.0.0.2:8080 check\n", "    server srv_2 10.0.0.2:8080 check\n    server srv_9 [fd00::9]:8080 check\n"), true},
		"endpoint gone":                  {edit("    server srv_2 10.0.0.2:8080 check\n", ""), true},
		"options of another backend":     {edit("srv_2 10.0.0.2:8080 check", "srv_2 10.0.0.2:8080 check weight 10"), false},
		"an option never accepted":       {edit("srv_2 10.0.0.2:8080 check", "srv_2 10.0.0.2:8080 check weight 900"), false},
		"a host name":                    {edit("10.0.0.2:8080", "svc.example.com:8080"), false},
		"port 0":                         {edit("10.0.0.2:8080", "10.0.0.2:0"), false},
		"a name twice":                   {edit("srv_2 10.0.0.2", "srv_1 10.0.0.2"), false},
		"another directive":              {edit("    balance roundrobin\n    server srv_1", "    balance leastconn\n    server srv_1"), false},
		"two backends":                   {edit("srv_2 10.0.0.2:8080", "srv_3 10.0.0.3:8080") + "", true},
		"servers of two backends":        {strings.Replace(edit("srv_2 10.0.0.2:8080", "srv_3 10.0.0.3:8080"), "10.0.1.1:80", "10.0.1.2:80", 1), false},
		"a first server":                 {edit("backend be_empty\n    balance roundrobin\n", "backend be_empty\n    balance roundrobin\n    server srv_1 10.0.2.1:80 check\n"), false},
		"a backend added":                {serversCfg + "backend be_c\n    server srv_1 10.0.3.1:80 check\n", false},
		"a comment":                      {edit("    server srv_2", "    # note\n    server srv_2"), true},
		"unchanged":                      {serversCfg, false},
		"a server in the frontend":       {edit("    default_backend be_a\n", "    default_backend be_a\n    server srv_1 10.0.0.1:80\n"), false},
		"a preprocessor line near":       {edit("    server srv_2 10.0.0.2:8080 check\n", "    server srv_2 10.0.0.2:8080 check\n.if defined(X)\n"), false},
		"servers in pieces, moved again": {edit("srv_1 10.0.0.1:8080", "srv_7 10.0.0.7:8080"), true},
	} {
		for _, pieces := range []bool{false, true} {
			next := bundle.TextOf(tc.next)
			if pieces {
				next = bundletest.Cut(rand.New(rand.NewPCG(1, uint64(len(name)))), tc.next)
			}
			if got := serversOnly(bundle.TextOf(serversCfg), next); got != tc.want {
				t.Errorf("%s (pieces %v): serversOnly = %v, want %v", name, pieces, got, tc.want)
			}
		}
	}
}

// NeedsFullCheck admits an endpoint's server lines on their own, not others.
func TestNeedsFullCheckOfServers(t *testing.T) {
	layout := bundle.Layout{ConfigFile: "/etc/haproxy/haproxy.cfg", MapsDir: "/etc/haproxy/maps", SSLCertsDir: "/etc/haproxy/certs", GeneralStorageDir: "/etc/haproxy/general"}
	cfg := func(s string) *bundle.Bundle {
		return bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(s)}})
	}
	prev := cfg(serversCfg)
	if full, why := NeedsFullCheck(prev, cfg(strings.Replace(serversCfg, "10.0.0.2:8080", "10.0.0.3:8080", 1)), layout); full {
		t.Errorf("an endpoint moved needs the full check: %s", why)
	}
	if full, _ := NeedsFullCheck(prev, cfg(strings.Replace(serversCfg, "10.0.0.2:8080", "svc.example.com:8080", 1)), layout); !full {
		t.Error("a server by host name was admitted without the full check")
	}
}

// Every change of server lines serversOnly admits passes `haproxy -c` (real
// HAProxy) when the configuration before it did: random chains of endpoints moved,
// added and taken out, with names, addresses, ports and options drawn from sets
// that hold what HAProxy refuses.
func TestServersOnlyAdmitsWhatHAProxyAccepts(t *testing.T) {
	checker := &Checker{NoCache: true}
	if _, err := checker.LookPath(); err != nil {
		t.Fatalf("haproxy is needed (make haproxy): %v", err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	addrs := []string{"10.0.0.%d:8080", "[fd00::%d]:80", "10.0.0.%d:65535", "10.0.0.%d:0", "10.0.0.%d:99999", "host%d.invalid:80", "10.0.0.%d"}
	opts := []string{"check", "check", "check weight 10", "check weight 900", "check inter 2s", "bogus"}
	names := []string{"srv_%d", "srv_%d", "srv_1", "srv-%d"}
	line := func() string {
		n := rng.IntN(20)
		return fmt.Sprintf("    server "+names[rng.IntN(len(names))]+" "+addrs[rng.IntN(len(addrs))]+" %s\n", n, n, opts[rng.IntN(len(opts))])
	}
	admitted := 0
	for chain := range 30 {
		servers := []string{"    server srv_100 10.0.0.100:8080 check\n"}
		cfgOf := func(servers []string) string {
			return strings.Replace(serversCfg, "    server srv_1 10.0.0.1:8080 check\n    server srv_2 10.0.0.2:8080 check\n", strings.Join(servers, ""), 1)
		}
		prev := cfgOf(servers)
		if err := checker.Check(context.Background(), bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(prev)}})); err != nil {
			t.Fatalf("chain %d: the first configuration: %v", chain, err)
		}
		for range 20 {
			next := append([]string(nil), servers...)
			i := rng.IntN(len(next) + 1)
			switch rng.IntN(3) {
			case 0:
				next = append(next[:i], append([]string{line()}, next[i:]...)...)
			case 1:
				if i < len(next) && len(next) > 1 {
					next = append(next[:i], next[i+1:]...)
				}
			default:
				if i < len(next) {
					next[i] = line()
				}
			}
			text := cfgOf(next)
			if !serversOnly(bundle.TextOf(prev), bundle.TextOf(text)) {
				continue // (the full check's: not this test's)
			}
			admitted++
			err := checker.Check(context.Background(), bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(text)}}))
			if err != nil {
				t.Fatalf("chain %d: admitted without haproxy -c, which refuses it: %v\n%s", chain, err, text)
			}
			prev, servers = text, next
		}
	}
	t.Logf("%d of 600 changes admitted without the full check, each of them passing it", admitted)
	if admitted < 40 {
		t.Fatalf("only %d of 600 changes admitted: the shortcut is not exercised", admitted)
	}
}
