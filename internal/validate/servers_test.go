package validate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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
    http-request set-var(txn.b) nbsrv(be_b)
`

func TestBackendsOnly(t *testing.T) {
	edit := func(old, new string) string { return strings.Replace(serversCfg, old, new, 1) }
	for name, tc := range map[string]struct {
		next string
		want bool
	}{
		"endpoint moved":                         {edit("srv_2 10.0.0.2:8080", "srv_3 10.0.0.3:8080"), true},
		"endpoint added":                         {edit("    server srv_2 10.0.0.2:8080 check\n", "    server srv_2 10.0.0.2:8080 check\n    server srv_9 [fd00::9]:8080 check\n"), true},
		"endpoint gone":                          {edit("    server srv_2 10.0.0.2:8080 check\n", ""), true},
		"options of another backend":             {edit("srv_2 10.0.0.2:8080 check", "srv_2 10.0.0.2:8080 check weight 10"), false},
		"an option never accepted":               {edit("srv_2 10.0.0.2:8080 check", "srv_2 10.0.0.2:8080 check weight 900"), false},
		"a host name":                            {edit("10.0.0.2:8080", "svc.example.com:8080"), false},
		"port 0":                                 {edit("10.0.0.2:8080", "10.0.0.2:0"), false},
		"a name twice":                           {edit("srv_2 10.0.0.2", "srv_1 10.0.0.2"), false},
		"another directive":                      {edit("    balance roundrobin\n    server srv_1", "    balance leastconn\n    server srv_1"), false},
		"two backends":                           {edit("srv_2 10.0.0.2:8080", "srv_3 10.0.0.3:8080") + "", true},
		"servers of two backends":                {strings.Replace(edit("srv_2 10.0.0.2:8080", "srv_3 10.0.0.3:8080"), "10.0.1.1:80", "10.0.1.2:80", 1), true},
		"a first server":                         {edit("backend be_empty\n    balance roundrobin\n", "backend be_empty\n    balance roundrobin\n    server srv_1 10.0.2.1:80 check\n"), false},
		"a backend added":                        {serversCfg + "backend be_c\n    server srv_1 10.0.3.1:80 check\n", false},
		"a backend added like the one before it": {edit("backend be_empty", "backend be_c\n    server srv_1 10.0.3.1:80 check weight 10\nbackend be_empty"), true},
		"a backend added like the one before it, too":    {edit("backend be_b", "backend be_c\n    balance roundrobin\nbackend be_b"), true},
		"a backend added unlike its neighbours":          {edit("backend be_b", "backend be_c\n    balance leastconn\nbackend be_b"), false},
		"a backend added like its neighbour, no servers": {edit("backend be_empty", "backend be_c\nbackend be_empty"), true},
		"a backend added, named elsewhere":               {edit("backend be_empty", "backend fe\nbackend be_empty"), false},
		"a backend there twice":                          {edit("backend be_empty", "backend be_b\n    server srv_1 10.0.1.1:80 check weight 10\nbackend be_empty"), false},
		"a backend added twice":                          {edit("backend be_empty", "backend be_c\nbackend be_c\nbackend be_empty"), false},
		"a backend added, a name HAProxy refuses":        {edit("backend be_empty", "backend be/c\nbackend be_empty"), false},
		"a backend added with a custom id":               {edit("backend be_b\n", "backend be_b\n    id 7\n"), false},
		"a server with a custom id":                      {edit("srv_2 10.0.0.2:8080 check", "srv_2 10.0.0.2:8080 check id 3"), false},
		"a server name HAProxy refuses":                  {edit("srv_2 10.0.0.2:8080", "srv/2 10.0.0.2:8080"), false},
		"a backend removed":                              {serversCfg[:strings.Index(serversCfg, "backend be_empty")], true},
		"a backend removed, named still":                 {edit("backend be_b\n    server srv_1 10.0.1.1:80 check weight 10\n", ""), false},
		"a frontend changed":                             {edit("bind 127.0.0.1:18080", "bind 127.0.0.1:18081"), false},
		"a comment":                                      {edit("    server srv_2", "    # note\n    server srv_2"), true},
		"unchanged":                                      {serversCfg, false},
		"a server in the frontend":                       {edit("    default_backend be_a\n", "    default_backend be_a\n    server srv_1 10.0.0.1:80\n"), false},
		"an indented preprocessor line in a backend":     {edit("    server srv_2 10.0.0.2:8080 check\n", "  .if defined(X)\n    server srv_2 10.0.0.2:8080 check\n  .endif\n"), false},
		"a preprocessor line near":                       {edit("    server srv_2 10.0.0.2:8080 check\n", "    server srv_2 10.0.0.2:8080 check\n.if defined(X)\n"), false},
		"servers in pieces, moved again":                 {edit("srv_1 10.0.0.1:8080", "srv_7 10.0.0.7:8080"), true},
	} {
		for _, pieces := range []bool{false, true} {
			next := bundle.TextOf(tc.next)
			if pieces {
				next = bundletest.Cut(rand.New(rand.NewPCG(1, uint64(len(name)))), tc.next)
			}
			if got := backendsOnly(bundle.TextOf(serversCfg), next); got != tc.want {
				t.Errorf("%s (pieces %v): backendsOnly = %v, want %v", name, pieces, got, tc.want)
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

// Every change backendsOnly admits passes `haproxy -c` (real HAProxy) when the
// configuration before it did: random chains of endpoints moved, added and taken out,
// and backends added and removed, with names, addresses, ports, options and lines
// drawn from sets that hold what HAProxy refuses.
func TestBackendsOnlyAdmitsWhatHAProxyAccepts(t *testing.T) {
	checker := &Checker{NoCache: true}
	if _, err := checker.LookPath(); err != nil {
		t.Fatalf("haproxy is needed (make haproxy): %v", err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func(from []string) string { return from[rng.IntN(len(from))] }
	addrs := []string{"10.0.0.%d:8080", "[fd00::%d]:80", "10.0.0.%d:65535", "10.0.0.%d:0", "10.0.0.%d:99999", "host%d.invalid:80", "10.0.0.%d"}
	opts := []string{"check", "check", "check weight 10", "check weight 900", "check inter 2s", "bogus", "check id 5"}
	names := []string{"srv_%d", "srv_%d", "srv_1", "srv-%d", "srv/%d"}
	line := func() string {
		n := rng.IntN(20)
		return fmt.Sprintf("    server "+pick(names)+" "+pick(addrs)+" %s\n", n, n, pick(opts))
	}
	backendNames := []string{"be_n%d", "be_n%d", "be_n%d", "be_n%d", "be_n%d", "be_a", "fe", "be/n%d", "be_n1"}
	// a new backend's servers: often as be_b's are (the libraries' backends are alike)
	newServer := func() string {
		if rng.IntN(2) == 0 {
			return line()
		}
		n := rng.IntN(200)
		return fmt.Sprintf("    server srv_%d 10.0.9.%d:80 check weight 10\n", n, n)
	}
	bodies := []string{"", "", "", "", "    balance roundrobin\n", "    balance leastconn\n", "    id 9\n", "    bogus_line\n"}
	type backend struct{ head, body string }
	admitted, kinds := 0, map[string]int{}
	for chain := range 40 {
		// be_a (the frontend's default) and its servers, then backends added and taken out
		backends := []backend{{"backend be_a\n", "    balance roundrobin\n    server srv_100 10.0.0.100:8080 check\n"},
			{"backend be_b\n", "    server srv_1 10.0.1.1:80 check weight 10\n"}}
		cfgOf := func(bs []backend) string {
			var b strings.Builder
			b.WriteString(serversCfg[:strings.Index(serversCfg, "\nbackend be_a")+1])
			for _, be := range bs {
				b.WriteString(be.head + be.body)
			}
			return b.String()
		}
		prev := cfgOf(backends)
		if err := checker.Check(context.Background(), bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(prev)}})); err != nil {
			t.Fatalf("chain %d: the first configuration: %v", chain, err)
		}
		for range 20 {
			next := slices.Clone(backends)
			var edits []string // one or two: changes of two sections at once too
			for range 1 + rng.IntN(2) {
				b, op := rng.IntN(max(1, len(next))), rng.IntN(6)
				switch {
				case op < 2 || len(next) == 0:
					edits = append(edits, "backend added")
					body := pick(bodies)
					for range rng.IntN(3) {
						body += newServer()
					}
					next = slices.Insert(next, rng.IntN(len(next)+1), backend{fmt.Sprintf("backend "+pick(backendNames)+"\n", chain*100+rng.IntN(50)), body})
				case op == 2:
					edits = append(edits, "backend removed")
					next = slices.Delete(next, b, b+1)
				default:
					edits = append(edits, "servers")
					servers := strings.SplitAfter(next[b].body, "\n")
					next[b].body = strings.Join(bundletest.EditLine(rng, servers[:len(servers)-1], line), "")
				}
			}
			kind := strings.Join(edits, " and ")
			text := cfgOf(next)
			if !backendsOnly(bundle.TextOf(prev), bundle.TextOf(text)) {
				continue // (the full check's: not this test's)
			}
			admitted++
			kinds[kind]++
			err := checker.Check(context.Background(), bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(text)}}))
			if err != nil {
				t.Fatalf("chain %d: admitted without haproxy -c, which refuses it: %v\n%s", chain, err, text)
			}
			prev, backends = text, next
		}
	}
	t.Logf("%d of 800 changes admitted without the full check, each of them passing it: %v", admitted, kinds)
	two := 0
	for kind, n := range kinds {
		if strings.Contains(kind, " and ") {
			two += n
		}
	}
	for _, edit := range []string{"servers", "backend added", "backend removed"} {
		n := 0
		for kind, k := range kinds {
			if strings.Contains(kind, edit) {
				n += k
			}
		}
		if n < 10 {
			t.Fatalf("only %d changes with %s admitted (%v): the shortcut is not exercised", n, edit, kinds)
		}
	}
	if two < 10 {
		t.Fatalf("only %d changes of two sections admitted (%v): the shortcut is not exercised", two, kinds)
	}
}

// A server gone that a line still names (a `use-server` of its section, another
// section's `track`) keeps the full check, which refuses it; a server nobody names
// does not.
func TestBackendsOnlyKeepsNamedServers(t *testing.T) {
	checker := &Checker{NoCache: true}
	if _, err := checker.LookPath(); err != nil {
		t.Fatalf("haproxy is needed (make haproxy): %v", err)
	}
	prev := serversCfg[:strings.Index(serversCfg, "\nbackend be_a")+1] + `backend be_a
    use-server srv_2 if { path /two }
    server srv_1 10.0.0.1:8080 check
    server srv_2 10.0.0.2:8080 check
    server srv_3 10.0.0.3:8080 check
backend be_b
    server srv_1 10.0.1.1:80 track be_a/srv_3
`
	check := func(text string) error {
		return checker.Check(context.Background(), bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(text)}}))
	}
	if err := check(prev); err != nil {
		t.Fatalf("the configuration before: %v", err)
	}
	for name, tc := range map[string]struct {
		gone string
		want bool
	}{
		"a server use-server names": {"    server srv_2 10.0.0.2:8080 check\n", false},
		"a server another tracks":   {"    server srv_3 10.0.0.3:8080 check\n", false},
		"a server nobody names":     {"    server srv_1 10.0.0.1:8080 check\n", true},
	} {
		next := strings.Replace(prev, tc.gone, "", 1)
		if got := backendsOnly(bundle.TextOf(prev), bundle.TextOf(next)); got != tc.want {
			t.Errorf("%s: backendsOnly = %v, want %v", name, got, tc.want)
		}
		if err := check(next); (err == nil) != tc.want {
			t.Errorf("%s: haproxy -c says %v, the rule expects it to pass: %v", name, err, tc.want)
		}
	}
}
