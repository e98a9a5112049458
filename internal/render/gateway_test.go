package render

import (
	"reflect"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// share is a route's share as the gateway library makes it: keyed map lines, a
// backend with its header lines, a note.
func share(host, backend string) *GatewayState {
	return &GatewayState{
		Hosts:         map[string]bool{host: true},
		Exact:         []string{"e " + host + "/x\x00" + host + "/x " + backend},
		PrefixSorted:  []string{"p " + host + "/\x00199990 " + host + "/ " + backend},
		PlainPrefixes: [][2]string{{host, ""}},
		Backends:      []*GatewayBackend{{Name: backend, Hdr: []string{backend + "/qs/x 1"}}},
		Notes:         []string{"route on " + host},
		Weighted:      []string{"@h/" + host + " 1"},
	}
}

func TestGatewayMergeFirstShareWins(t *testing.T) {
	s := &GatewayState{}
	gatewayMerge(s, share("a", "b1"), share("a", "b2"), share("c", "b1"))
	idx := gatewayIndex(s)
	text := idx["mapText"].(map[string]bundle.Text)
	if got, want := text["exact"].String(), "a/x b1\nc/x b1\n"; got != want {
		t.Errorf("exact %q, want %q: the first share wins a key", got, want)
	}
	if got, want := text["prefix"].String(), "a/ b1\nc/ b1\n"; got != want {
		t.Errorf("prefix %q, want %q (sort key removed)", got, want)
	}
	if got := len(idx["backends"].([]*GatewayBackend)); got != 2 {
		t.Errorf("%d backends, want 2: a backend name is written once", got)
	}
	if got, want := idx["notes"], []string{"route on a", "route on a", "route on c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("notes %q, want %q", got, want)
	}
	if got, want := text["headerLines"].String(), "b1/qs/x 1\nb2/qs/x 1\n"; got != want {
		t.Errorf("header lines %q, want %q: each backend's once", got, want)
	}
	if got, want := text["hosts"].String(), "a 1\nc 1\n"; got != want {
		t.Errorf("hosts %q, want %q", got, want)
	}
}

// Merging merged shares is merging all of theirs: runs of routes can be remembered
// merged.
func TestGatewayMergeComposes(t *testing.T) {
	shares := []*GatewayState{share("a", "b1"), share("b", "b2"), share("a", "b2"), share("c", "b1"), share("d", "b3")}
	flat := &GatewayState{}
	gatewayMerge(flat, shares...)
	left, right := &GatewayState{}, &GatewayState{}
	gatewayMerge(left, shares[:2]...)
	gatewayMerge(right, shares[2:]...)
	runs := &GatewayState{}
	gatewayMerge(runs, left, right)
	if a, b := gatewayIndex(flat), gatewayIndex(runs); !reflect.DeepEqual(a, b) {
		t.Errorf("merged runs differ from one merge:\n%v\n%v", b, a)
	}
	if got := len(shares[0].Backends); got != 1 {
		t.Errorf("a share was changed by the merge (%d backends)", got)
	}
}

func TestCommentLines(t *testing.T) {
	if got, want := commentLines("# ", []string{"a", "b\nc"}), "# \"a\"\n# \"b\\nc\""; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := commentLines("# ", nil); got != "" {
		t.Errorf("no notes: %q", got)
	}
}

func TestGatewayHostIntersection(t *testing.T) {
	for _, c := range []struct{ listener, route, want string }{
		{"", "a.example.com", "a.example.com"},
		{"", "*.example.com", "*.example.com"},
		{"a.example.com", "a.example.com", "a.example.com"},
		{"*.example.com", "a.example.com", "a.example.com"},
		{"*.example.com", "a.b.example.com", "a.b.example.com"},
		{"*.example.com", "*.b.example.com", "*.b.example.com"},
		{"a.example.com", "*.example.com", "a.example.com"},
		{"*.b.example.com", "*.example.com", "*.b.example.com"},
		{"*.example.com", "example.com", ""},
		{"a.example.com", "b.example.com", ""},
		{"*.example.com", "a.example.org", ""},
		{"*.a.example.com", "*.b.example.com", ""},
	} {
		if got := gatewayHostIntersection(c.listener, c.route); got != c.want {
			t.Errorf("gateway_host_intersection(%q, %q) = %q, want %q", c.listener, c.route, got, c.want)
		}
	}
}

// Units compare gateway backends by their Service port, not by the servers read of
// it: those are the unit's reads, checked on their own.
func TestSameGatewayBackendComparesTheServicePort(t *testing.T) {
	backend := func(port string, lines ...string) *GatewayBackend {
		s := &readServers{ref: serviceRef{"ns", "web", port}}
		for _, l := range lines {
			s.lines = append(s.lines, serverLine{text: l})
		}
		return &GatewayBackend{Name: "gw_ns_web_80", Directives: []string{"timeout server 5s"}, servers: s}
	}
	for _, c := range []struct {
		a, b *GatewayBackend
		same bool
	}{
		{backend("http", "srv_a a:80"), backend("http", "srv_b b:80"), true},
		{backend("http"), backend("web"), false},
		{backend("http"), &GatewayBackend{Name: "gw_ns_web_80", Directives: []string{"timeout server 5s"}}, false},
		{backend("http"), &GatewayBackend{Name: "gw_ns_web_80", servers: &readServers{ref: serviceRef{"ns", "web", "http"}}}, false},
	} {
		if got := sameInput(c.a, c.b); got != c.same {
			t.Errorf("sameInput(%+v, %+v) = %v, want %v", c.a, c.b, got, c.same)
		}
		if got := sameInput([]*GatewayBackend{c.a}, []*GatewayBackend{c.b}); got != c.same {
			t.Errorf("as lists: %v, want %v", got, c.same)
		}
	}
}
