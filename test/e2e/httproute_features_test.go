package e2e

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// TestHTTPRouteFeatures drives the gateway library on real HAProxy (a Gateway with
// pods of its own, deploy/local's overlay): every HTTPRoute match type and their
// precedence, every core filter, the CORS filter, weighted backendRefs, a backendRef-level
// ResponseHeaderModifier, an HTTPS listener with its certificate, and a
// cross-namespace backendRef without and with a ReferenceGrant.
//
// Checks report with t.Errorf and the test goes on; the Gateway pod's haproxy.cfg
// is logged on failure.
func TestHTTPRouteFeatures(t *testing.T) {
	e := setupLibraries(t, 1, "", "base", "ingress", "gateway")
	gw, err := gwclient.NewForConfig(e.c.REST)
	if err != nil {
		t.Fatal(err)
	}
	ca := newFtCA(t)
	ftTLSSecret(t, e, e.ns, "gw-cert", ca, "secure.example.com")
	ftEchoDeployment(t, e, e.ns, "echo2", 1)
	ftService(t, e, e.ns, "echo2", "echo2", "web", 8080)
	other := e.c.NewNamespace(t).Name // a backend in another namespace
	ftEchoDeployment(t, e, other, "echo3", 1)
	ftService(t, e, other, "echo3", "echo3", "http", 80)

	class := e.ns
	if _, err := gw.GatewayV1().GatewayClasses().Create(e.ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: gwv1.GatewayController(e.controllerName)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = gw.GatewayV1().GatewayClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
	})
	secureHost := gwv1.Hostname("secure.example.com")
	terminate := gwv1.TLSModeTerminate
	if _, err := gw.GatewayV1().Gateways(e.ns).Create(e.ctx, &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class), Listeners: []gwv1.Listener{
			{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType},
			{Name: "https", Port: 443, Protocol: gwv1.HTTPSProtocolType, Hostname: &secureHost, TLS: &gwv1.ListenerTLSConfig{
				Mode: &terminate, CertificateRefs: []gwv1.SecretObjectReference{{Name: "gw-cert"}}}},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The Gateway's HAProxy pod: in the test namespace, labelled with the Gateway's
	// id; its IP must be the Gateway's status address.
	sum := sha256.Sum256([]byte(e.ns + "/gw"))
	gwID := hex.EncodeToString(sum[:])[:12]
	var addr, pod, statusAddr string
	e.eventually("gw Programmed, with a ready pod of this test's controller", 120*time.Second, func() (bool, string) {
		g, err := gw.GatewayV1().Gateways(e.ns).Get(e.ctx, "gw", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		programmed := false
		for _, c := range g.Status.Conditions {
			if c.Type == string(gwv1.GatewayConditionProgrammed) && c.Status == metav1.ConditionTrue && c.ObservedGeneration == g.Generation &&
				len(g.Status.Addresses) > 0 {
				programmed, statusAddr = true, g.Status.Addresses[0].Value
			}
		}
		pods, err := e.c.Client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "haproxy-haptic.org/gateway=" + gwID})
		if err != nil {
			return false, err.Error()
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && p.Status.PodIP != "" && ready(p) {
				pod, addr = p.Name, p.Status.PodIP
			}
		}
		return programmed && addr != "", fmt.Sprintf("pod %q %s; %+v", pod, addr, g.Status)
	})
	if statusAddr != addr {
		t.Fatalf("gw status.addresses[0] is %s, but its pod %s has %s", statusAddr, pod, addr)
	}
	ftDumpOnFailure(t, e, func() string { return pod })
	c := newFtClient(e, ca.pool)
	do := func(method, host, path string, hdr ...string) ftResp {
		return c.do(method, "http://"+net.JoinHostPort(addr, "80")+path, host, hdr...)
	}
	get := func(host, path string, hdr ...string) ftResp { return do(http.MethodGet, host, path, hdr...) }

	create := func(r *gwv1.HTTPRoute) {
		t.Helper()
		r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "gw"}}
		if _, err := gw.GatewayV1().HTTPRoutes(e.ns).Create(e.ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create route %s: %v", r.Name, err)
		}
	}
	route := func(name, host string, rules ...gwv1.HTTPRouteRule) *gwv1.HTTPRoute {
		return &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: gwv1.HTTPRouteSpec{Hostnames: []gwv1.Hostname{gwv1.Hostname(host)}, Rules: rules}}
	}

	// ---- matches and precedence ----
	hdr := func(name, value string) gwv1.HTTPHeaderMatch {
		return gwv1.HTTPHeaderMatch{Name: gwv1.HTTPHeaderName(name), Value: value}
	}
	post := gwv1.HTTPMethodPost
	create(route("match", "match.example.com",
		gwRule(gwMatch(gwv1.PathMatchExact, "/exact"), gwRef("echo2", 8080)),
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/exact"), gwRef("echo", 80)),
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/pre"), gwRef("echo", 80)),
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/pre/longer"), gwRef("echo2", 8080)),
		gwRule(gwMatch(gwv1.PathMatchRegularExpression, "/re/[0-9]+"), gwRef("echo2", 8080)),
		gwRule(gwv1.HTTPRouteMatch{Path: gwMatch(gwv1.PathMatchPathPrefix, "/hdr").Path, Headers: []gwv1.HTTPHeaderMatch{hdr("X-Version", "v2")}}, gwRef("echo2", 8080)),
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/hdr"), gwRef("echo", 80)),
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/hdr/sub"), gwRef("echo", 80)),
		gwRule(gwv1.HTTPRouteMatch{Path: gwMatch(gwv1.PathMatchPathPrefix, "/q").Path, QueryParams: []gwv1.HTTPQueryParamMatch{{Name: "v", Value: "2"}}}, gwRef("echo2", 8080)),
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/q"), gwRef("echo", 80)),
		gwRule(gwv1.HTTPRouteMatch{Path: gwMatch(gwv1.PathMatchPathPrefix, "/m").Path, Method: &post}, gwRef("echo2", 8080)),
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/m"), gwRef("echo", 80)),
	))
	create(route("match2", "match.example.com", // at most 16 rules per route: the rest on a second route
		// A trailing / of a PathPrefix is ignored.
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/slash/"), gwRef("echo2", 8080)),
		// Two headers beat one; a header RegularExpression.
		gwRule(gwv1.HTTPRouteMatch{Path: gwMatch(gwv1.PathMatchPathPrefix, "/two").Path, Headers: []gwv1.HTTPHeaderMatch{hdr("X-A", "1")}}, gwRef("echo", 80)),
		gwRule(gwv1.HTTPRouteMatch{Path: gwMatch(gwv1.PathMatchPathPrefix, "/two").Path, Headers: []gwv1.HTTPHeaderMatch{hdr("X-A", "1"), hdr("X-B", "2")}}, gwRef("echo2", 8080)),
		gwRule(gwv1.HTTPRouteMatch{Path: gwMatch(gwv1.PathMatchPathPrefix, "/hre").Path, Headers: []gwv1.HTTPHeaderMatch{{
			Type: ftPtr(gwv1.HeaderMatchRegularExpression), Name: "X-Re", Value: "v[0-9]+"}}}, gwRef("echo2", 8080)),
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/hre"), gwRef("echo", 80)),
		// Several matches of one rule are ORed.
		gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{gwMatch(gwv1.PathMatchExact, "/or1"), gwMatch(gwv1.PathMatchExact, "/or2")},
			BackendRefs: []gwv1.HTTPBackendRef{gwRef("echo2", 8080)}},
		// Unresolved backends answer 500.
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/nosvc"), gwRef("no-such-service", 80)),
		gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/noport"), gwRef("echo", 81)),
		gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{gwMatch(gwv1.PathMatchPathPrefix, "/norefs")}},
	))
	// Two routes with the same match: the older one wins (creation time, then name).
	create(route("zz-older", "conflict.example.com", gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/c"), gwRef("echo", 80))))
	time.Sleep(1100 * time.Millisecond) // creation timestamps have a resolution of one second
	create(route("aa-newer", "conflict.example.com", gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/c"), gwRef("echo2", 8080))))
	// A route without hostnames serves every host, also hosts that have routes of their own.
	catchall := route("catchall", "", gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/catchall"), gwRef("echo", 80)))
	catchall.Spec.Hostnames = nil
	create(catchall)
	// Wildcard route hostnames match one or more labels; an exact hostname wins.
	create(route("wild", "*.gwwild.example.com", gwRule(gwv1.HTTPRouteMatch{}, gwRef("echo2", 8080))))
	create(route("wild-exact", "exact.gwwild.example.com", gwRule(gwv1.HTTPRouteMatch{}, gwRef("echo", 80))))
	// A route whose only rule matches a header anywhere (no path: PathPrefix /).
	create(route("header-only", "hdr-only.example.com",
		gwRule(gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{hdr("X-Env", "canary")}}, gwRef("echo2", 8080)),
		gwRule(gwv1.HTTPRouteMatch{}, gwRef("echo", 80)),
	))

	phase(t, "HTTPRoute matches: path Exact, PathPrefix, RegularExpression, header, query, method, and precedence", func() {
		var cases []func() (bool, string)
		ftWait(t, "match.example.com routed", 60*time.Second, func() (bool, string) {
			a, b, w := get("match.example.com", "/exact"), get("match.example.com", "/pre"), get("exact.gwwild.example.com", "/")
			return a.backend() == "echo2" && b.backend() == "echo" && w.backend() == "echo", a.String() + " | " + b.String() + " | " + w.String()
		})
		for _, tc := range []struct {
			method, host, path string
			hdr                []string
			code               int
			backend            string
		}{
			{"GET", "match.example.com", "/exact", nil, 200, "echo2"},                          // Exact beats PathPrefix /exact
			{"GET", "match.example.com", "/exact/x", nil, 200, "echo"},                         // only the prefix matches
			{"GET", "match.example.com", "/exactx", nil, 404, ""},                              // PathPrefix is element-wise
			{"GET", "match.example.com", "/pre", nil, 200, "echo"},                             //
			{"GET", "match.example.com", "/pre/x", nil, 200, "echo"},                           //
			{"GET", "match.example.com", "/pre/longer", nil, 200, "echo2"},                     // longer prefix beats shorter
			{"GET", "match.example.com", "/pre/longer/y", nil, 200, "echo2"},                   //
			{"GET", "match.example.com", "/pre/longerz", nil, 200, "echo"},                     // element-wise
			{"GET", "match.example.com", "/prefix", nil, 404, ""},                              //
			{"GET", "match.example.com", "/re/123", nil, 200, "echo2"},                         // RegularExpression
			{"GET", "match.example.com", "/re/abc", nil, 404, ""},                              //
			{"GET", "match.example.com", "/re/123/x", nil, 404, ""},                            // a full match of the path
			{"GET", "match.example.com", "/hdr", []string{"X-Version", "v2"}, 200, "echo2"},    // header match beats no header
			{"GET", "match.example.com", "/hdr/x", []string{"x-version", "v2"}, 200, "echo2"},  // header names are case-insensitive
			{"GET", "match.example.com", "/hdr", []string{"X-Version", "v1"}, 200, "echo"},     //
			{"GET", "match.example.com", "/hdr", []string{"X-Version", "V2"}, 200, "echo"},     // header values are case-sensitive
			{"GET", "conflict.example.com", "/c", nil, 200, "echo"},                            // the older route wins
			{"GET", "match.example.com", "/hdr", nil, 200, "echo"},                             //
			{"GET", "match.example.com", "/hdr/sub", []string{"X-Version", "v2"}, 200, "echo"}, // longer prefix beats a header match
			{"GET", "match.example.com", "/q?v=2", nil, 200, "echo2"},                          // query parameter
			{"GET", "match.example.com", "/q?a=b&v=2", nil, 200, "echo2"},                      //
			{"GET", "match.example.com", "/q?v=1", nil, 200, "echo"},                           //
			{"GET", "match.example.com", "/q", nil, 200, "echo"},                               //
			{"POST", "match.example.com", "/m", nil, 200, "echo2"},                             // method
			{"GET", "match.example.com", "/m", nil, 200, "echo"},                               //
			{"GET", "hdr-only.example.com", "/any", []string{"X-Env", "canary"}, 200, "echo2"}, //
			{"GET", "hdr-only.example.com", "/any", nil, 200, "echo"},                          //
			{"GET", "match.example.com", "/slash", nil, 200, "echo2"},
			{"GET", "match.example.com", "/slash/x", nil, 200, "echo2"},
			{"GET", "match.example.com", "/slashx", nil, 404, ""},
			{"GET", "match.example.com", "/two", []string{"X-A", "1", "X-B", "2"}, 200, "echo2"}, // more headers win
			{"GET", "match.example.com", "/two", []string{"X-A", "1"}, 200, "echo"},
			{"GET", "match.example.com", "/two", []string{"X-B", "2"}, 404, ""},
			{"GET", "match.example.com", "/hre", []string{"X-Re", "v42"}, 200, "echo2"},
			{"GET", "match.example.com", "/hre", []string{"X-Re", "x42"}, 200, "echo"},
			{"GET", "match.example.com", "/or1", nil, 200, "echo2"},
			{"GET", "match.example.com", "/or2", nil, 200, "echo2"},
			{"GET", "match.example.com", "/or3", nil, 404, ""},
			{"GET", "match.example.com", "/nosvc", nil, 500, ""},  // backendRef to a missing Service
			{"GET", "match.example.com", "/noport", nil, 500, ""}, // backendRef to a missing port
			{"GET", "match.example.com", "/norefs", nil, 500, ""}, // a rule without backendRefs
			{"GET", "a.gwwild.example.com", "/", nil, 200, "echo2"},
			{"GET", "a.b.gwwild.example.com", "/", nil, 200, "echo2"}, // Gateway API wildcards cover several labels
			{"GET", "exact.gwwild.example.com", "/", nil, 200, "echo"},
			{"GET", "gwwild.example.com", "/", nil, 404, ""},
			{"GET", "MATCH.Example.com", "/exact", nil, 200, "echo2"}, // hostnames are case-insensitive
			{"GET", "match.example.com:80", "/exact", nil, 200, "echo2"},
			{"GET", "other.example.com", "/exact", nil, 404, ""},            // no route for the host
			{"GET", "other.example.com", "/catchall/x", nil, 200, "echo"},   // a route without hostnames
			{"GET", "match.example.com", "/catchall", nil, 200, "echo"},     // … also for a host with routes of its own
			{"GET", "a.gwwild.example.com", "/catchall", nil, 200, "echo2"}, // the more specific hostname (the wildcard route, PathPrefix /) wins
		} {
			cases = append(cases, func() (bool, string) {
				r := do(tc.method, tc.host, tc.path, tc.hdr...)
				return r.Code == tc.code && r.backend() == tc.backend,
					fmt.Sprintf("%s http://%s%s %v: got %s; want %d from %q", tc.method, tc.host, tc.path, tc.hdr, r, tc.code, tc.backend)
			})
		}
		ftTable(t, "HTTPRoute matches", 45*time.Second, cases)
	})

	// ---- filters ----
	str := func(s string) *string { return &s }
	code := func(c int) *int { return &c }
	https := "https"
	redirectHost := gwv1.PreciseHostname("redirected.example.com")
	rewriteHost := gwv1.PreciseHostname("rewritten.example.com")
	filterRule := func(path string, f gwv1.HTTPRouteFilter) gwv1.HTTPRouteRule {
		r := gwRule(gwMatch(gwv1.PathMatchPathPrefix, path), gwRef("echo", 80))
		r.Filters = []gwv1.HTTPRouteFilter{f}
		if f.Type == gwv1.HTTPRouteFilterRequestRedirect {
			r.BackendRefs = nil
		}
		return r
	}
	create(route("filters", "filters.example.com",
		filterRule("/reqhdr", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gwv1.HTTPHeaderFilter{
			Set: []gwv1.HTTPHeader{{Name: "X-Set", Value: "set-value"}, {Name: "X-Odd", Value: `100% "it's" = a/b?c`}},
			Add: []gwv1.HTTPHeader{{Name: "X-Add", Value: "added"}}, Remove: []string{"X-Remove"}}}),
		filterRule("/resphdr", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gwv1.HTTPHeaderFilter{
			Set: []gwv1.HTTPHeader{{Name: "X-Resp-Set", Value: "set-value"}}, Add: []gwv1.HTTPHeader{{Name: "X-Resp-Add", Value: "added"}}, Remove: []string{"X-Resp-Remove"}}}),
		filterRule("/redirect", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
			Scheme: &https, Hostname: &redirectHost, StatusCode: code(301)}}),
		filterRule("/moved", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
			Hostname: &redirectHost, StatusCode: code(302)}}),
		filterRule("/old", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{
			Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: str("/new")}}}),
		filterRule("/strip", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{
			Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: str("/")}}}),
		filterRule("/sl/", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{
			Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: str("/xyz/")}}}),
		filterRule("/rp", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
			Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: str("/dest")}, StatusCode: code(301)}}),
		filterRule("/port-redirect", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
			Port: ftPtr(gwv1.PortNumber(8443))}}),
		filterRule("/plain-redirect", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwv1.HTTPRequestRedirectFilter{
			Scheme: &https}}),
		func() gwv1.HTTPRouteRule {
			r := gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/slow"), gwRef("echo", 80))
			d := gwv1.Duration("1s")
			r.Timeouts = &gwv1.HTTPRouteTimeouts{Request: &d}
			return r
		}(),
		filterRule("/full", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{
			Hostname: &rewriteHost, Path: &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: str("/replaced")}}}),
	))
	phase(t, "HTTPRoute filters: request/response header modifiers, redirects, URL rewrites", func() {
		ftWait(t, "filters.example.com routed", 60*time.Second, func() (bool, string) {
			r := get("filters.example.com", "/reqhdr")
			return r.Code == 200, r.String()
		})
		r := get("filters.example.com", "/reqhdr", "X-Set", "client", "X-Add", "client", "X-Remove", "client", "X-Keep", "client")
		if r.Code != 200 || r.Echo.header("X-Set") != "set-value" || r.Echo.header("X-Add") != "client,added" ||
			r.Echo.header("X-Remove") != "" || r.Echo.header("X-Keep") != "client" || r.Echo.header("X-Odd") != `100% "it's" = a/b?c` {
			t.Errorf("RequestHeaderModifier: got %s X-Set=%v X-Add=%v X-Remove=%v X-Keep=%v X-Odd=%v; want X-Set=[set-value] X-Add=[client added] no X-Remove, X-Keep=[client], X-Odd as set",
				r, r.Echo.Headers["X-Set"], r.Echo.Headers["X-Add"], r.Echo.Headers["X-Remove"], r.Echo.Headers["X-Keep"], r.Echo.Headers["X-Odd"])
		}
		t.Logf("RequestHeaderModifier: backend saw X-Set=%v X-Add=%v X-Remove=%v", r.Echo.Headers["X-Set"], r.Echo.Headers["X-Add"], r.Echo.Headers["X-Remove"])
		// echo-basic sets response headers named in X-Echo-Set-Header.
		r = get("filters.example.com", "/resphdr", "X-Echo-Set-Header", "X-Resp-Set: backend, X-Resp-Add: backend, X-Resp-Remove: backend, X-Resp-Keep: backend")
		if r.Code != 200 || !slices.Equal(r.Header.Values("X-Resp-Set"), []string{"set-value"}) || strings.Join(r.Header.Values("X-Resp-Add"), ",") != "backend,added" || r.Header.Get("X-Resp-Remove") != "" || r.Header.Get("X-Resp-Keep") != "backend" {
			t.Errorf("ResponseHeaderModifier: got %s X-Resp-Set=%v X-Resp-Add=%v X-Resp-Remove=%v X-Resp-Keep=%v; want [set-value] [backend added] none [backend]",
				r, r.Header.Values("X-Resp-Set"), r.Header.Values("X-Resp-Add"), r.Header.Values("X-Resp-Remove"), r.Header.Values("X-Resp-Keep"))
		}
		r = get("filters.example.com", "/redirect/x?y=1")
		if r.Code != 301 || r.Header.Get("Location") != "https://redirected.example.com/redirect/x?y=1" {
			t.Errorf("RequestRedirect scheme https, hostname, 301: got %s Location=%q; want 301 to https://redirected.example.com/redirect/x?y=1", r, r.Header.Get("Location"))
		}
		r = get("filters.example.com", "/moved")
		if r.Code != 302 || r.Header.Get("Location") != "http://redirected.example.com/moved" {
			t.Errorf("RequestRedirect hostname, 302: got %s Location=%q; want 302 to http://redirected.example.com/moved", r, r.Header.Get("Location"))
		}
		for _, tc := range []struct{ path, upstream string }{
			{"/old/x?y=1", "/new/x?y=1"}, {"/old", "/new"}, {"/old/", "/new/"}, {"/old/a/b", "/new/a/b"},
		} {
			if r := get("filters.example.com", tc.path); r.Code != 200 || r.Echo.Path != tc.upstream {
				t.Errorf("URLRewrite ReplacePrefixMatch /old → /new: GET %s: got %s; want the backend to see %s", tc.path, r, tc.upstream)
			}
		}
		for _, tc := range []struct{ path, upstream string }{
			{"/strip/bar", "/bar"}, {"/strip/", "/"}, {"/strip", "/"}, {"/sl/bar", "/xyz/bar"},
		} {
			if r := get("filters.example.com", tc.path); r.Code != 200 || r.Echo.Path != tc.upstream {
				t.Errorf("URLRewrite ReplacePrefixMatch (spec table): GET %s: got %s; want the backend to see %s", tc.path, r, tc.upstream)
			}
		}
		for _, tc := range []struct {
			path, location string
			code           int
		}{
			{"/rp/x?y=1", "http://filters.example.com/dest/x?y=1", 301},
			{"/rp", "http://filters.example.com/dest", 301},
			{"/plain-redirect/a", "https://filters.example.com/plain-redirect/a", 302}, // default status 302, port 443 implied
			{"/port-redirect", "http://filters.example.com:8443/port-redirect", 302},
		} {
			if r := get("filters.example.com", tc.path); r.Code != tc.code || r.Header.Get("Location") != tc.location {
				t.Errorf("RequestRedirect: GET %s: got %s Location=%q; want %d to %s", tc.path, r, r.Header.Get("Location"), tc.code, tc.location)
			}
		}
		// timeouts.request 1s: a backend that answers after 3s gets 504 after about 1s.
		if r := get("filters.example.com", "/slow?delay=100ms"); r.Code != 200 {
			t.Errorf("timeouts.request 1s: a fast answer: got %s; want 200", r)
		}
		start := time.Now()
		r = get("filters.example.com", "/slow?delay=3s")
		if took := time.Since(start); r.Code != 504 || took > 2500*time.Millisecond {
			t.Errorf("timeouts.request 1s: GET /slow?delay=3s: got %s after %s; want 504 after about 1s (the request timeout bounds the whole request, retries included)", r, took.Round(time.Millisecond))
		} else {
			t.Logf("timeouts.request 1s: 504 after %s", took.Round(time.Millisecond))
		}
		if r := get("filters.example.com", "/oldx"); r.Code != 404 {
			t.Errorf("GET /oldx (no rule matches): got %s; want 404", r)
		}
		for _, path := range []string{"/full", "/full/any/thing"} {
			r := get("filters.example.com", path)
			if r.Code != 200 || (r.Echo.Path != "/replaced" && r.Echo.Path != "/replaced?") || r.Echo.Host != "rewritten.example.com" {
				t.Errorf("URLRewrite ReplaceFullPath /replaced + hostname: GET %s: got %s host %q; want path /replaced, host rewritten.example.com", path, r, r.Echo.Host)
			}
		}
	})

	// ---- CORS (experimental filter): map lines keyed by the rule, no reload ----
	phase(t, "HTTPRoute CORS filter: preflight answered by HAProxy, actual requests get the CORS headers, without a reload", func() {
		e.settle(addr)
		before := e.reloadCounts(addr)
		corsRule := func(path string, c gwv1.HTTPCORSFilter) gwv1.HTTPRouteRule {
			r := gwRule(gwMatch(gwv1.PathMatchPathPrefix, path), gwRef("echo", 80))
			r.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterCORS, CORS: &c}}
			return r
		}
		create(route("cors", "cors.example.com",
			corsRule("/cors", gwv1.HTTPCORSFilter{
				AllowOrigins:     []gwv1.CORSOrigin{"https://app.example", "https://*.wild.example"},
				AllowCredentials: ftPtr(true),
				AllowMethods:     []gwv1.HTTPMethodWithWildcard{"GET", "PUT"},
				AllowHeaders:     []gwv1.HTTPHeaderName{"X-Token"},
				ExposeHeaders:    []gwv1.HTTPHeaderName{"X-Request-Id"},
				MaxAge:           60,
			}),
			corsRule("/open", gwv1.HTTPCORSFilter{AllowOrigins: []gwv1.CORSOrigin{"*"}}),
		))
		preflight := func(path, origin string) ftResp {
			return do(http.MethodOptions, "cors.example.com", path, "Origin", origin, "Access-Control-Request-Method", "PUT",
				"Access-Control-Request-Headers", "X-Token")
		}
		if !ftWait(t, "cors.example.com answers a preflight", 60*time.Second, func() (bool, string) {
			r := preflight("/cors", "https://app.example")
			return r.Code == 204 && r.Header.Get("Access-Control-Allow-Origin") == "https://app.example", fmt.Sprint(r, r.Header)
		}) {
			return
		}
		r := preflight("/cors/x", "https://app.example")
		for name, want := range map[string]string{
			"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Allow-Credentials": "true",
			"Access-Control-Allow-Methods": "GET,PUT", "Access-Control-Allow-Headers": "X-Token",
			"Access-Control-Max-Age": "60", "Vary": "Origin",
		} {
			if got := r.Header.Get(name); r.Code != 204 || got != want || r.Echo.Pod != "" {
				t.Errorf("CORS preflight from an allowed origin: got %s %s: %q; want 204 from HAProxy with %q", r, name, got, want)
			}
		}
		if r := preflight("/cors", "https://evil.example"); r.Code != 204 || r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Allow-Methods") != "" {
			t.Errorf("CORS preflight from an origin that is not allowed: got %s %v; want 204 without CORS headers", r, r.Header)
		}
		for _, tc := range []struct{ origin, acao, creds string }{
			{"https://app.example", "https://app.example", "true"},
			{"https://a.b.wild.example", "https://a.b.wild.example", "true"}, // a wildcard covers several labels
			{"https://wild.example", "", ""},
			{"http://app.example", "", ""}, // another scheme is another origin
			{"https://evil.example", "", ""},
		} {
			r := get("cors.example.com", "/cors", "Origin", tc.origin)
			expose := ""
			if tc.acao != "" {
				expose = "X-Request-Id"
			}
			if r.Code != 200 || r.backend() != "echo" || r.Header.Get("Access-Control-Allow-Origin") != tc.acao ||
				r.Header.Get("Access-Control-Allow-Credentials") != tc.creds || r.Header.Get("Access-Control-Expose-Headers") != expose ||
				!slices.Contains(r.Header.Values("Vary"), "Origin") {
				t.Errorf("CORS GET from %s: got %s %v; want 200 from echo, Allow-Origin %q, Allow-Credentials %q, Expose-Headers %q, Vary: Origin",
					tc.origin, r, r.Header, tc.acao, tc.creds, expose)
			}
		}
		if r := get("cors.example.com", "/open", "Origin", "https://any.example"); r.Code != 200 || r.Header.Get("Access-Control-Allow-Origin") != "*" ||
			r.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("CORS allowOrigins *: got %s %v; want 200 with Access-Control-Allow-Origin * and no credentials", r, r.Header)
		}
		if r := get("cors.example.com", "/open"); r.Code != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("CORS, a request without Origin: got %s %v; want no CORS headers", r, r.Header)
		}
		if err := gw.GatewayV1().HTTPRoutes(e.ns).Delete(e.ctx, "cors", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ftWait(t, "the CORS route is gone", 60*time.Second, func() (bool, string) {
			r := preflight("/cors", "https://app.example")
			return r.Code == 404, r.String()
		})
		if after := e.reloadCounts(addr); after != before {
			t.Errorf("adding and removing an HTTPRoute with a CORS filter (existing backend) reloaded HAProxy: controller %v → %v, agent %d → %d\n%s",
				before.controller, after.controller, before.agent, after.agent, e.reloadLog())
		}
	})

	// ---- weights and a backendRef-level response header ----
	weighted := func(w1, w2 int32) *gwv1.HTTPRoute {
		a, b := gwRef("echo", 80), gwRef("echo2", 8080)
		a.Weight, b.Weight = &w1, &w2
		b.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterResponseHeaderModifier,
			ResponseHeaderModifier: &gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: "X-From-Ref", Value: "echo2"}}}},
			{Type: gwv1.HTTPRouteFilterRequestHeaderModifier,
				RequestHeaderModifier: &gwv1.HTTPHeaderFilter{Set: []gwv1.HTTPHeader{{Name: "X-To-Ref", Value: "echo2"}}}}}
		r := route("weights", "weights.example.com", gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{a, b}})
		r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "gw"}}
		return r
	}
	create(weighted(1, 0))
	phase(t, "weighted backendRefs 1:0 and 1:1, a backendRef-level ResponseHeaderModifier", func() {
		ftWait(t, "weights.example.com routed", 60*time.Second, func() (bool, string) {
			r := get("weights.example.com", "/")
			return r.Code == 200, r.String()
		})
		seen := map[string]int{}
		for range 30 {
			r := get("weights.example.com", "/")
			seen[r.backend()+fmt.Sprint(r.Code)]++
		}
		if seen["echo200"] != 30 {
			t.Errorf("weights 1:0: 30 requests answered %v; want all 200 from echo", seen)
		}
		// (read again on a conflict: the controller writes the route's status meanwhile)
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := gw.GatewayV1().HTTPRoutes(e.ns).Get(e.ctx, "weights", metav1.GetOptions{})
			if err != nil {
				return err
			}
			next := weighted(1, 1)
			next.ResourceVersion = cur.ResourceVersion
			_, err = gw.GatewayV1().HTTPRoutes(e.ns).Update(e.ctx, next, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		ftWait(t, "weights 1:1: both backends answer", 60*time.Second, func() (bool, string) {
			seen := map[string]int{}
			for range 40 {
				r := get("weights.example.com", "/")
				seen[r.backend()]++
				if seen["echo"] > 0 && seen["echo2"] > 0 {
					break
				}
			}
			return seen["echo"] > 0 && seen["echo2"] > 0, fmt.Sprint(seen)
		})
		dist := map[string]int{}
		bad := 0
		for range 40 {
			r := get("weights.example.com", "/")
			want := ""
			if r.backend() == "echo2" {
				want = "echo2"
			}
			dist[r.backend()+" X-From-Ref="+r.Header.Get("X-From-Ref")+" X-To-Ref="+r.Echo.header("X-To-Ref")]++
			if r.Code != 200 || r.Header.Get("X-From-Ref") != want || r.Echo.header("X-To-Ref") != want {
				bad++
				if bad <= 3 {
					t.Errorf("backendRef header modifiers: %s with response X-From-Ref %q, request X-To-Ref %q; want %q (only echo2's requests and responses carry them)",
						r, r.Header.Get("X-From-Ref"), r.Echo.header("X-To-Ref"), want)
				}
			}
		}
		t.Logf("weights 1:1, 40 requests: %v", dist)
	})

	// ---- HTTPS listener ----
	create(route("secure", "secure.example.com", gwRule(gwv1.HTTPRouteMatch{}, gwRef("echo2", 8080))))
	onlyHTTPS := route("https-only", "secure.example.com", gwRule(gwMatch(gwv1.PathMatchPathPrefix, "/only"), gwRef("echo", 80)))
	section := gwv1.SectionName("https")
	onlyHTTPS.Spec.ParentRefs = []gwv1.ParentReference{{Name: "gw", SectionName: &section}}
	if _, err := gw.GatewayV1().HTTPRoutes(e.ns).Create(e.ctx, onlyHTTPS, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	phase(t, "HTTPS listener: TLS Terminate with the listener's certificate", func() {
		secure := func() ftResp {
			return c.do(http.MethodGet, "https://"+net.JoinHostPort(addr, "443")+"/s", "secure.example.com")
		}
		if !ftWait(t, "https://secure.example.com answers", 60*time.Second, func() (bool, string) {
			r := secure()
			return r.Code == 200, r.String()
		}) {
			return
		}
		r := secure()
		if r.TLS == nil || !slices.Equal(r.TLS.PeerCertificates[0].DNSNames, []string{"secure.example.com"}) {
			t.Errorf("HTTPS listener: served certificate %v; want the one for secure.example.com", r.TLS)
		}
		if r.backend() != "echo2" || r.Echo.Path != "/s" || r.Echo.header("X-Forwarded-Proto") != "https" {
			t.Errorf("HTTPS listener: got %s X-Forwarded-Proto=%q; want 200 from echo2, path /s, X-Forwarded-Proto https", r, r.Echo.header("X-Forwarded-Proto"))
		}
		h2 := netns.HTTPClient(e.c.Config.Netns, &http.Transport{ForceAttemptHTTP2: true,
			TLSClientConfig: &tls.Config{ServerName: "secure.example.com", RootCAs: ca.pool}}, 5*time.Second)
		if req, err := http.NewRequestWithContext(e.ctx, http.MethodGet, "https://"+net.JoinHostPort(addr, "443")+"/h2", nil); err == nil {
			req.Host = "secure.example.com"
			resp, err := h2.Do(req)
			if err != nil {
				t.Errorf("HTTPS listener, HTTP/2: %v", err)
			} else {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.ProtoMajor != 2 || resp.StatusCode != 200 || !strings.HasPrefix(ftEchoOf(body).Pod, "echo2-") {
					t.Errorf("HTTPS listener, HTTP/2: %s %d from %q; want HTTP/2.0 200 from echo2", resp.Proto, resp.StatusCode, ftEchoOf(body).Pod)
				}
			}
		}
		// A route attached to the https listener only (sectionName) is not served on port 80.
		ftWait(t, "the https-only route over https", 30*time.Second, func() (bool, string) {
			r := c.do(http.MethodGet, "https://"+net.JoinHostPort(addr, "443")+"/only", "secure.example.com")
			return r.Code == 200 && r.backend() == "echo", r.String()
		})
		if r := get("secure.example.com", "/only"); r.Code != 200 || r.backend() != "echo2" {
			t.Errorf("http://secure.example.com/only: got %s; want 200 from echo2 (route secure: the https-only route is not attached to the http listener)", r)
		}
		// Rotating the listener's certificate: the Secret's new certificate is served.
		crt, key := ca.leaf(t, "secure.example.com")
		if _, err := e.c.Client.CoreV1().Secrets(e.ns).Update(e.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "gw-cert"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key},
		}, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(crt)
		rotated, _ := x509.ParseCertificate(block.Bytes)
		ftWait(t, "the rotated listener certificate is served", 30*time.Second, func() (bool, string) {
			r := secure()
			if r.TLS == nil {
				return false, r.String()
			}
			return r.TLS.PeerCertificates[0].SerialNumber.Cmp(rotated.SerialNumber) == 0 && r.Code == 200,
				fmt.Sprint("serial ", r.TLS.PeerCertificates[0].SerialNumber, " want ", rotated.SerialNumber, " ", r)
		})
	})

	// ---- cross-namespace backendRef ----
	crossRef := gwRef("echo3", 80)
	ns := gwv1.Namespace(other)
	crossRef.Namespace = &ns
	create(route("cross", "cross.example.com", gwRule(gwv1.HTTPRouteMatch{}, crossRef)))
	create(route("same", "same.example.com", gwRule(gwv1.HTTPRouteMatch{}, gwRef("echo", 80))))
	// A route of another namespace: the listeners allow routes of the Gateway's namespace only.
	foreign := route("foreign", "foreign.example.com", gwRule(gwv1.HTTPRouteMatch{}, gwRef("echo3", 80)))
	gwNS := gwv1.Namespace(e.ns)
	foreign.Spec.ParentRefs = []gwv1.ParentReference{{Name: "gw", Namespace: &gwNS}}
	if _, err := gw.GatewayV1().HTTPRoutes(other).Create(e.ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	phase(t, "a cross-namespace backendRef routes only with a ReferenceGrant", func() {
		ftWait(t, "same.example.com routed (the config with the cross route is live)", 60*time.Second, func() (bool, string) {
			r := get("same.example.com", "/")
			return r.Code == 200, r.String()
		})
		time.Sleep(2 * time.Second)
		if r := get("foreign.example.com", "/"); r.Code != 404 {
			t.Errorf("a route of namespace %s attached to a Gateway whose listeners allow the Same namespace: got %s; want 404", other, r)
		}
		if r := get("cross.example.com", "/"); r.Code != 500 && r.Code != 404 {
			t.Errorf("cross-namespace backendRef without a ReferenceGrant: got %s; want 500 (or no route)", r)
		} else if r.Code != 500 {
			t.Logf("note: cross-namespace backendRef without a ReferenceGrant answers %d (the spec asks for 500)", r.Code)
		}
		if _, err := gw.GatewayV1beta1().ReferenceGrants(other).Create(e.ctx, &gwv1beta1.ReferenceGrant{
			ObjectMeta: metav1.ObjectMeta{Name: "from-" + e.ns},
			Spec: gwv1beta1.ReferenceGrantSpec{
				From: []gwv1beta1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: "HTTPRoute", Namespace: gwv1.Namespace(e.ns)}},
				To:   []gwv1beta1.ReferenceGrantTo{{Group: "", Kind: "Service"}},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Logf("cross-namespace backendRef without a ReferenceGrant: %s", get("cross.example.com", "/"))
		ftWait(t, "cross-namespace backendRef with a ReferenceGrant routes", 60*time.Second, func() (bool, string) {
			r := get("cross.example.com", "/")
			return r.Code == 200 && r.backend() == "echo3" && r.Echo.Namespace == other, r.String()
		})
		// Removing the grant takes the route away again.
		if err := gw.GatewayV1beta1().ReferenceGrants(other).Delete(e.ctx, "from-"+e.ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ftWait(t, "cross-namespace backendRef without the ReferenceGrant stops routing", 60*time.Second, func() (bool, string) {
			r := get("cross.example.com", "/")
			return r.Code == 500 || r.Code == 404, r.String()
		})
	})
}

func gwMatch(t gwv1.PathMatchType, value string) gwv1.HTTPRouteMatch {
	return gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Type: &t, Value: &value}}
}

func gwRef(svc string, port int32) gwv1.HTTPBackendRef {
	p := gwv1.PortNumber(port)
	return gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
		Name: gwv1.ObjectName(svc), Port: &p}}}
}

func gwRule(m gwv1.HTTPRouteMatch, refs ...gwv1.HTTPBackendRef) gwv1.HTTPRouteRule {
	r := gwv1.HTTPRouteRule{BackendRefs: refs}
	if m.Path != nil || m.Headers != nil || m.QueryParams != nil || m.Method != nil {
		r.Matches = []gwv1.HTTPRouteMatch{m}
	}
	return r
}

func ftPtr[T any](v T) *T { return &v }
