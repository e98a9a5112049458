package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// TestIngressFeatures drives the default libraries (base + ingress) on real HAProxy
// with real HTTP(S) requests from inside the cluster network: every pathType, a
// wildcard host, a defaultBackend, several paths and Services in one Ingress,
// Service ports by name and number, TLS with SNI, annotations with observable
// effects, and an invalid annotation value that fails the render until it is fixed.
//
// Checks report with t.Errorf and the test goes on, so one run lists every
// feature that does not work; the rendered haproxy.cfg is logged on failure.
func TestIngressFeatures(t *testing.T) {
	e := setupLibraries(t, 1, "", "base", "ingress")
	var pod, ip string
	e.eventually("a ready HAProxy pod", 90*time.Second, func() (bool, string) {
		for name, addr := range e.haproxyPods() {
			pod, ip = name, addr
		}
		return ip != "", ""
	})
	ftDumpOnFailure(t, e, func() string { return pod })
	ca := newFtCA(t)
	c := newFtClient(e, ca.pool)
	http1 := func(method, host, path string, hdr ...string) ftResp {
		return c.do(method, "http://"+net.JoinHostPort(ip, "8080")+path, host, hdr...)
	}
	get := func(host, path string, hdr ...string) ftResp { return http1(http.MethodGet, host, path, hdr...) }
	https := func(host, path string, hdr ...string) ftResp {
		return c.do(http.MethodGet, "https://"+net.JoinHostPort(ip, "8443")+path, host, hdr...)
	}
	e.eventually("200 from echo", 90*time.Second, func() (bool, string) {
		r := get(echoHost, "/")
		return r.Code == 200, r.String()
	})
	// The client's address as HAProxy sees it (option forwardfor → X-Forwarded-For).
	clientAddr := get(echoHost, "/").Echo.header("X-Forwarded-For")
	if net.ParseIP(clientAddr) == nil {
		t.Fatalf("no client address in X-Forwarded-For: %q", clientAddr)
	}
	t.Logf("client address seen by HAProxy: %s", clientAddr)

	// A second application: echo2 pods (app=echo2) behind Service echo2, port "web" 8080.
	ftEchoDeployment(t, e, e.ns, "echo2", 1)
	ftService(t, e, e.ns, "echo2", "echo2", "web", 8080)

	class := e.ns
	ing := func(name string, ann map[string]string, rules ...networkingv1.IngressRule) *networkingv1.Ingress {
		return &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
			Spec:       networkingv1.IngressSpec{IngressClassName: &class, Rules: rules},
		}
	}
	create := func(i *networkingv1.Ingress) {
		t.Helper()
		if _, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Create(e.ctx, i, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ingress %s: %v", i.Name, err)
		}
	}

	phase(t, "pathTypes, ports by name and number, several paths and Services in one Ingress, wildcard host", func() {
		create(ing("paths", nil, ftRule("paths.example.com",
			ftPath("/exact", networkingv1.PathTypeExact, "echo", "http"),
			ftPath("/foo", networkingv1.PathTypePrefix, "echo2", 8080),
			ftPath("/foo", networkingv1.PathTypeExact, "echo", "http"), // Exact beats Prefix on the same path
			ftPath("/trail/", networkingv1.PathTypePrefix, "echo2", "web"),
			ftPath("/missing", networkingv1.PathTypePrefix, "no-such-service", 80),
			ftPath("/foo/deep", networkingv1.PathTypePrefix, "echo", 80),
			ftPath("/impl", networkingv1.PathTypeImplementationSpecific, "echo2", "web"),
		)))
		create(ing("wild", nil, ftRule("*.wild.example.com", ftPath("/", networkingv1.PathTypePrefix, "echo2", "web"))))
		create(ing("wild-exact", nil, ftRule("exact.wild.example.com", ftPath("/", networkingv1.PathTypePrefix, "echo", "http"))))
		// One host in two Ingresses: their paths merge; annotations stay with their own paths.
		create(ing("shared-a", map[string]string{"haproxy-haptic.org/response-set-header": "X-Shared a\n"},
			ftRule("shared.example.com", ftPath("/a", networkingv1.PathTypePrefix, "echo", "http"))))
		create(ing("shared-b", nil, ftRule("shared.example.com", ftPath("/b", networkingv1.PathTypePrefix, "echo", "http"))))
		create(ing("hostless", nil, ftRule("", ftPath("/hostless", networkingv1.PathTypePrefix, "echo2", "web"))))
		ftWait(t, "paths.example.com and *.wild.example.com routed", 60*time.Second, func() (bool, string) {
			a, b, w, h := get("paths.example.com", "/exact"), get("paths.example.com", "/foo/"), get("a.wild.example.com", "/"), get("any.example.com", "/hostless")
			return a.backend() == "echo" && b.backend() == "echo2" && w.backend() == "echo2" && h.backend() == "echo2",
				a.String() + " | " + b.String() + " | " + w.String() + " | " + h.String()
		})
		var cases []func() (bool, string)
		for _, tc := range []struct {
			host, path string
			code       int
			backend    string
		}{
			{"paths.example.com", "/exact", 200, "echo"},
			{"paths.example.com", "/exact?x=1", 200, "echo"},
			{"paths.example.com", "/exact/", 404, ""},
			{"paths.example.com", "/exactly", 404, ""},
			{"paths.example.com", "/foo", 200, "echo"}, // Exact /foo
			{"paths.example.com", "/foo?x=1", 200, "echo"},
			{"paths.example.com", "/foo/", 200, "echo2"},
			{"paths.example.com", "/trail", 200, "echo2"}, // Prefix /trail/ matches /trail (Kubernetes: trailing / ignored)
			{"paths.example.com", "/trail/x", 200, "echo2"},
			{"paths.example.com", "/trailx", 404, ""},
			{"paths.example.com", "/missing", 503, ""}, // a Service that does not exist: no server
			{"paths.example.com", "/foo/bar", 200, "echo2"},
			{"paths.example.com", "/foobar", 404, ""},
			{"paths.example.com", "/foo/deep", 200, "echo"},
			{"paths.example.com", "/foo/deep/x", 200, "echo"},
			{"paths.example.com", "/foo/deeper", 200, "echo2"},
			{"paths.example.com", "/impl", 200, "echo2"},
			{"paths.example.com", "/impl/x", 200, "echo2"},
			{"paths.example.com", "/", 404, ""},
			{"PATHS.example.com:8080", "/exact", 200, "echo"},
			{"a.wild.example.com", "/", 200, "echo2"},
			{"xyz.wild.example.com", "/any/path", 200, "echo2"},
			{"wild.example.com", "/", 404, ""},
			{"a.b.wild.example.com", "/", 404, ""},
			{"exact.wild.example.com", "/", 200, "echo"}, // an exact host beats the wildcard
			{"unknown.example.com", "/", 404, ""},
			{"unknown.example.com", "/hostless/x", 200, "echo2"}, // a rule without host serves every host
			{"a.wild.example.com", "/hostless", 200, "echo2"},
		} {
			cases = append(cases, func() (bool, string) {
				r := get(tc.host, tc.path)
				return r.Code == tc.code && r.backend() == tc.backend,
					fmt.Sprintf("GET http://%s%s: got %s; want %d from %q", tc.host, tc.path, r, tc.code, tc.backend)
			})
		}
		ftTable(t, "Ingress paths and hosts", 45*time.Second, cases)
		ftWait(t, "shared.example.com/a with its Ingress's response header", 30*time.Second, func() (bool, string) {
			r := get("shared.example.com", "/a")
			return r.Code == 200 && r.Header.Get("X-Shared") == "a", fmt.Sprintf("%s X-Shared=%q", r, r.Header.Get("X-Shared"))
		})
		if r := get("shared.example.com", "/b"); r.Code != 200 || r.backend() != "echo" || r.Header.Get("X-Shared") != "" {
			t.Errorf("shared.example.com/b (other Ingress, same Service port, no annotation): got %s X-Shared=%q; want 200 from echo without X-Shared", r, r.Header.Get("X-Shared"))
		}
		if r := get("shared.example.com", "/c"); r.Code != 404 {
			t.Errorf("shared.example.com/c: got %s; want 404", r)
		}
	})

	phase(t, "defaultBackend catches what no rule matches", func() {
		defIng := ing("default", nil)
		defIng.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: "echo2", Port: networkingv1.ServiceBackendPort{Number: 8080}}}
		create(defIng)
		ftWait(t, "unknown host → defaultBackend", 60*time.Second, func() (bool, string) {
			r := get("unknown.example.com", "/")
			return r.Code == 200 && r.backend() == "echo2", r.String()
		})
		for _, tc := range []struct{ host, path, backend string }{
			{"unknown.example.com", "/x/y", "echo2"},
			{"paths.example.com", "/foobar", "echo2"}, // a known host, no path of it matches
			{"paths.example.com", "/exact", "echo"},   // rules still win
			{"paths.example.com", "/foo/deep", "echo"},
		} {
			if r := get(tc.host, tc.path); r.Code != 200 || r.backend() != tc.backend {
				t.Errorf("GET http://%s%s with a defaultBackend: got %s; want 200 from %s", tc.host, tc.path, r, tc.backend)
			}
		}
		if err := e.c.Client.NetworkingV1().Ingresses(e.ns).Delete(e.ctx, "default", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ftWait(t, "404 again without the defaultBackend", 60*time.Second, func() (bool, string) {
			r := get("unknown.example.com", "/")
			return r.Code == 404, r.String()
		})
	})

	phase(t, "TLS with SNI: each host gets its certificate and its backend", func() {
		ftTLSSecret(t, e, e.ns, "tls-a", ca, "tls-a.example.com")
		ftTLSSecret(t, e, e.ns, "tls-b", ca, "tls-b.example.com")
		i := ing("tls", nil,
			ftRule("tls-a.example.com", ftPath("/", networkingv1.PathTypePrefix, "echo", "http")),
			ftRule("tls-b.example.com", ftPath("/", networkingv1.PathTypePrefix, "echo2", "web")))
		i.Spec.TLS = []networkingv1.IngressTLS{
			{Hosts: []string{"tls-a.example.com"}, SecretName: "tls-a"},
			{Hosts: []string{"tls-b.example.com"}, SecretName: "tls-b"},
		}
		create(i)
		ftTLSSecret(t, e, e.ns, "tls-wild", ca, "*.tlswild.example.com")
		w := ing("tls-wild", nil, ftRule("*.tlswild.example.com", ftPath("/", networkingv1.PathTypePrefix, "echo2", "web")))
		w.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"*.tlswild.example.com"}, SecretName: "tls-wild"}}
		create(w)
		if !ftWait(t, "https for tls-a, tls-b and *.tlswild", 60*time.Second, func() (bool, string) {
			a, b, c := https("tls-a.example.com", "/"), https("tls-b.example.com", "/"), https("x.tlswild.example.com", "/")
			return a.Code == 200 && b.Code == 200 && c.Code == 200, a.String() + " | " + b.String() + " | " + c.String()
		}) {
			return
		}
		if r := https("x.tlswild.example.com", "/w"); r.TLS == nil || !slices.Equal(r.TLS.PeerCertificates[0].DNSNames, []string{"*.tlswild.example.com"}) ||
			r.backend() != "echo2" {
			t.Errorf("https SNI x.tlswild.example.com: got %s; want the *.tlswild.example.com certificate and echo2", r)
		}
		// Rotating a certificate: the Secret's new certificate is served.
		before := https("tls-a.example.com", "/")
		crt, key := ca.leaf(t, "tls-a.example.com")
		if _, err := e.c.Client.CoreV1().Secrets(e.ns).Update(e.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "tls-a"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key},
		}, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(crt)
		rotated, _ := x509.ParseCertificate(block.Bytes)
		ftWait(t, "the rotated tls-a certificate is served", 30*time.Second, func() (bool, string) {
			r := https("tls-a.example.com", "/")
			if r.TLS == nil {
				return false, r.String()
			}
			return r.TLS.PeerCertificates[0].SerialNumber.Cmp(rotated.SerialNumber) == 0 && r.backend() == "echo",
				fmt.Sprint("serial ", r.TLS.PeerCertificates[0].SerialNumber, " want ", rotated.SerialNumber, " (before ", before.TLS != nil, ") ", r)
		})
		// An SNI no entry matches gets the default certificate (one of the test's).
		if conn, err := (netns.Dialer{Name: e.c.Config.Netns}).DialContext(e.ctx, "tcp", net.JoinHostPort(ip, "8443")); err != nil {
			t.Errorf("dial https: %v", err)
		} else {
			tc := tls.Client(conn, &tls.Config{ServerName: "unknown.example.org", InsecureSkipVerify: true})
			if err := tc.HandshakeContext(e.ctx); err != nil {
				t.Errorf("TLS handshake with an unknown SNI: %v; want the default certificate", err)
			} else {
				leaf := tc.ConnectionState().PeerCertificates[0]
				if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.pool}); err != nil {
					t.Errorf("unknown SNI: served %v, not a certificate of the test's Secrets: %v", leaf.DNSNames, err)
				} else {
					t.Logf("unknown SNI: default certificate %v", leaf.DNSNames)
				}
			}
			tc.Close()
		}
		// ALPN h2: HTTP/2 over TLS is routed the same way.
		h2 := netns.HTTPClient(e.c.Config.Netns, &http.Transport{ForceAttemptHTTP2: true,
			TLSClientConfig: &tls.Config{ServerName: "tls-b.example.com", RootCAs: ca.pool}}, 5*time.Second)
		if req, err := http.NewRequestWithContext(e.ctx, http.MethodGet, "https://"+net.JoinHostPort(ip, "8443")+"/h2", nil); err == nil {
			req.Host = "tls-b.example.com"
			resp, err := h2.Do(req)
			if err != nil {
				t.Errorf("HTTP/2 over TLS: %v", err)
			} else {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.ProtoMajor != 2 || resp.StatusCode != 200 || !strings.HasPrefix(ftEchoOf(body).Pod, "echo2-") {
					t.Errorf("HTTP/2 over TLS to tls-b.example.com: %s %d from %q; want HTTP/2.0 200 from echo2", resp.Proto, resp.StatusCode, ftEchoOf(body).Pod)
				}
			}
		}
		for _, tc := range []struct{ host, backend string }{{"tls-a.example.com", "echo"}, {"tls-b.example.com", "echo2"}} {
			r := https(tc.host, "/x")
			if r.Err != nil || r.TLS == nil {
				t.Errorf("https %s: %s", tc.host, r)
				continue
			}
			// The client verified the chain against the test's CA and the name: also
			// check that the leaf is the host's own (not a certificate covering both).
			leaf := r.TLS.PeerCertificates[0]
			if !slices.Equal(leaf.DNSNames, []string{tc.host}) {
				t.Errorf("https SNI %s: served certificate for %v, want [%s]", tc.host, leaf.DNSNames, tc.host)
			}
			if r.backend() != tc.backend || r.Echo.Path != "/x" {
				t.Errorf("https %s/x: got %s; want 200 from %s with path /x", tc.host, r, tc.backend)
			}
			if p := r.Echo.header("X-Forwarded-Proto"); p != "https" {
				t.Errorf("https %s: backend saw X-Forwarded-Proto %q, want https", tc.host, p)
			}
			if r := get(tc.host, "/"); r.Code != 200 || r.backend() != tc.backend {
				t.Errorf("plain http %s (no ssl-redirect): got %s; want 200 from %s", tc.host, r, tc.backend)
			}
		}
	})

	// Annotations: one Ingress (host) per feature, all created at once.
	users := "alice:$6$haptictestsalt$8cpTblPIyfc9paa4vjCy53UPzopiUBt4Ty4t6Ozo8kct5M9d0.p428F3SVy/O/C.ID6y7OmHf9YYvxm01NDbM0\n" // alice:secret
	if _, err := e.c.Client.CoreV1().Secrets(e.ns).Create(e.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "users"}, StringData: map[string]string{"auth": users},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ftTLSSecret(t, e, e.ns, "tls-redirect", ca, "redirect.example.com")
	const ann = "haproxy-haptic.org/"
	annotated := map[string]map[string]string{
		"redirect":  {ann + "ssl-redirect": "true"},
		"allow":     {ann + "allowlist": "192.0.2.1, 198.51.100.0/24"},
		"allow-me":  {ann + "allowlist": clientAddr + "/32"},
		"deny":      {ann + "denylist": clientAddr},
		"deny-all":  {ann + "denylist": "0.0.0.0/0"},
		"headers":   {ann + "request-set-header": "X-Team payments\nX-Note it's 100% \"fine\"\n", ann + "response-set-header": "X-Resp-Test yes\n"},
		"ratelimit": {ann + "rate-limit-rps": "5"},
		"cors":      {ann + "cors-enable": "true", ann + "cors-allow-origin": "https://app.example.com", ann + "cors-allow-methods": "GET, POST"},
		"gzip":      nil,
		"nogzip":    {ann + "compress-enable": "false"},
		"auth":      {ann + "auth-type": "basic", ann + "auth-secret": "users", ann + "auth-realm": "Team area"},
		"rewrite":   {ann + "rewrite-target": "/app"},
		"pathrw":    {ann + "path-rewrite": `^/api/(.*)$ /v2/\1`},
		"timeout":   {ann + "timeout-server": "1s"},
	}
	phase(t, "annotations with observable effects", func() {
		for name, a := range annotated {
			path := "/"
			if name == "rewrite" {
				path = "/api"
			}
			i := ing(name, a, ftRule(name+".example.com", ftPath(path, networkingv1.PathTypePrefix, "echo", "http")))
			if name == "rewrite" {
				i.Spec.Rules[0].HTTP.Paths = append(i.Spec.Rules[0].HTTP.Paths, ftPath("/status", networkingv1.PathTypeExact, "echo", "http"))
			}
			if name == "redirect" {
				i.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"redirect.example.com"}, SecretName: "tls-redirect"}}
			}
			create(i)
		}
		// Every host answers something other than 404 once its route is in.
		ftWait(t, "every annotated route in the config", 60*time.Second, func() (bool, string) {
			var missing []string
			for name := range annotated {
				path := "/"
				if name == "rewrite" {
					path = "/api"
				}
				if r := get(name+".example.com", path); r.Code == 404 || r.Code == 0 {
					missing = append(missing, name+": "+r.String())
				}
			}
			return len(missing) == 0, strings.Join(missing, " | ")
		})

		// ssl-redirect: 308 to https, https itself serves.
		ftWait(t, "ssl-redirect: 308 to https", 30*time.Second, func() (bool, string) {
			r := get("redirect.example.com", "/x/y?q=1")
			return r.Code == 308 && r.Header.Get("Location") == "https://redirect.example.com/x/y?q=1", r.String() + " Location=" + r.Header.Get("Location")
		})
		r := get("redirect.example.com", "/x/y?q=1")
		t.Logf("ssl-redirect: http://redirect.example.com/x/y?q=1 → %d Location %s", r.Code, r.Header.Get("Location"))
		if r := https("redirect.example.com", "/x/y?q=1"); r.Code != 200 || r.Echo.Path != "/x/y?q=1" {
			t.Errorf("ssl-redirect: https://redirect.example.com/x/y?q=1: got %s; want 200 with path /x/y?q=1", r)
		}

		// allowlist / denylist.
		for _, tc := range []struct {
			host string
			code int
		}{{"allow", 403}, {"allow-me", 200}, {"deny", 403}, {"deny-all", 403}} {
			ftWait(t, fmt.Sprintf("%s.example.com answers %d", tc.host, tc.code), 30*time.Second, func() (bool, string) {
				r := get(tc.host+".example.com", "/")
				return r.Code == tc.code, r.String()
			})
		}

		// Removing the allowlist opens the route.
		if _, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Patch(e.ctx, "allow", types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"haproxy-haptic.org/allowlist":null}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ftWait(t, "allow.example.com answers 200 without its allowlist", 30*time.Second, func() (bool, string) {
			r := get("allow.example.com", "/")
			return r.Code == 200 && r.backend() == "echo", r.String()
		})

		// request-set-header / response-set-header.
		ftWait(t, "request-set-header and response-set-header", 30*time.Second, func() (bool, string) {
			r := get("headers.example.com", "/", "X-Team", "client-value")
			return r.Code == 200 && r.Echo.header("X-Team") == "payments" && r.Echo.header("X-Note") == `it's 100% "fine"` &&
					r.Header.Get("X-Resp-Test") == "yes",
				fmt.Sprintf("%s X-Team=%v X-Note=%v X-Resp-Test=%q", r, r.Echo.Headers["X-Team"], r.Echo.Headers["X-Note"], r.Header.Get("X-Resp-Test"))
		})
		if r := get("allow-me.example.com", "/"); r.Echo.header("X-Team") != "" || r.Header.Get("X-Resp-Test") != "" {
			t.Errorf("headers of headers.example.com leak to another route: %v %q", r.Echo.Headers["X-Team"], r.Header.Get("X-Resp-Test"))
		}

		// rate-limit-rps 5: a burst gets 429, a request after a pause passes.
		ftWait(t, "rate-limit-rps 5: 429 within a burst", 30*time.Second, func() (bool, string) {
			codes := map[int]int{}
			start := time.Now()
			for range 40 {
				r := get("ratelimit.example.com", "/")
				codes[r.Code]++
				if r.Code == 429 || time.Since(start) > 3*time.Second {
					break
				}
			}
			if codes[429] > 0 {
				t.Logf("rate-limit-rps 5: burst answered %v in %s", codes, time.Since(start).Round(time.Millisecond))
			}
			return codes[429] > 0 && codes[200] >= 1, fmt.Sprint(codes, " in ", time.Since(start).Round(time.Millisecond))
		})
		ftWait(t, "rate limit: 200 again after a pause", 10*time.Second, func() (bool, string) {
			time.Sleep(1500 * time.Millisecond)
			r := get("ratelimit.example.com", "/")
			return r.Code == 200, r.String()
		})
		// Another route is not limited.
		for i := range 12 {
			if r := get("gzip.example.com", "/"); r.Code != 200 {
				t.Errorf("request %d to a route without rate-limit-rps: %s", i, r)
				break
			}
		}

		// CORS.
		ftWait(t, "cors preflight answered 204 by HAProxy", 30*time.Second, func() (bool, string) {
			r := http1(http.MethodOptions, "cors.example.com", "/api", "Origin", "https://app.example.com", "Access-Control-Request-Method", "POST")
			return r.Code == 204 && r.Header.Get("Access-Control-Allow-Origin") == "https://app.example.com" &&
					strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") && r.Header.Get("Access-Control-Max-Age") != "",
				fmt.Sprintf("%s %v", r, r.Header)
		})
		if r := get("cors.example.com", "/", "Origin", "https://app.example.com"); r.Code != 200 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
			!strings.Contains(r.Header.Get("Vary"), "Origin") {
			t.Errorf("cors GET with an allowed Origin: got %s %v; want 200 with Access-Control-Allow-Origin https://app.example.com and Vary: Origin", r, r.Header)
		}
		if r := get("cors.example.com", "/", "Origin", "https://evil.example.com"); r.Code != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("cors GET with another Origin: got %s %v; want 200 without Access-Control-Allow-Origin", r, r.Header)
		}
		if r := http1(http.MethodOptions, "gzip.example.com", "/", "Origin", "https://app.example.com", "Access-Control-Request-Method", "POST"); r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("a route without cors-enable answered a preflight with CORS headers: %s %v", r, r.Header)
		}

		// Compression: gzip by default, none with compress-enable "false".
		ftWait(t, "default route compresses with gzip", 30*time.Second, func() (bool, string) {
			r := get("gzip.example.com", "/", "Accept-Encoding", "gzip")
			if r.Code != 200 || r.Header.Get("Content-Encoding") != "gzip" {
				return false, fmt.Sprintf("%s Content-Encoding=%q", r, r.Header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(bytes.NewReader(r.Body))
			if err != nil {
				return false, err.Error()
			}
			plain, err := io.ReadAll(zr)
			t.Logf("gzip.example.com: Content-Encoding gzip, %d bytes → %d bytes", len(r.Body), len(plain))
			return err == nil && strings.HasPrefix(ftEchoOf(plain).Pod, "echo-"), fmt.Sprint(err, string(plain))
		})
		ftWait(t, "compress-enable false: no compression", 30*time.Second, func() (bool, string) {
			r := get("nogzip.example.com", "/", "Accept-Encoding", "gzip")
			if r.Code == 200 && r.Echo.header("Accept-Encoding") != "" {
				return false, "the backend saw Accept-Encoding " + r.Echo.header("Accept-Encoding")
			}
			return r.Code == 200 && r.Header.Get("Content-Encoding") == "" && r.backend() == "echo",
				fmt.Sprintf("%s Content-Encoding=%q", r, r.Header.Get("Content-Encoding"))
		})

		// Basic auth.
		ftWait(t, "basic auth: 401 without credentials", 30*time.Second, func() (bool, string) {
			r := get("auth.example.com", "/")
			return r.Code == 401 && strings.Contains(r.Header.Get("WWW-Authenticate"), `Basic realm="Team area"`),
				fmt.Sprintf("%s WWW-Authenticate=%q", r, r.Header.Get("WWW-Authenticate"))
		})
		if r := get("auth.example.com", "/", "Authorization", ftBasic("alice", "wrong")); r.Code != 401 {
			t.Errorf("basic auth with a wrong password: got %s; want 401", r)
		}
		if r := get("auth.example.com", "/", "Authorization", ftBasic("mallory", "secret")); r.Code != 401 {
			t.Errorf("basic auth with an unknown user: got %s; want 401", r)
		}
		if r := get("auth.example.com", "/", "Authorization", ftBasic("alice", "secret")); r.Code != 200 || r.backend() != "echo" {
			t.Errorf("basic auth alice:secret: got %s; want 200 from echo", r)
		}

		// path-rewrite: one replace-path for the backend.
		ftWait(t, "path-rewrite ^/api/(.*)$ /v2/\\1", 30*time.Second, func() (bool, string) {
			r := get("pathrw.example.com", "/api/x/y?q=1")
			return r.Code == 200 && r.Echo.Path == "/v2/x/y?q=1", r.String() + "; want upstream /v2/x/y?q=1"
		})
		if r := get("pathrw.example.com", "/other"); r.Code != 200 || r.Echo.Path != "/other" {
			t.Errorf("path-rewrite: a path the regex does not match: got %s; want it unchanged", r)
		}

		// timeout-server 1s: a backend that answers after 3s gets 504.
		if r := get("timeout.example.com", "/?delay=100ms"); r.Code != 200 {
			t.Errorf("timeout-server 1s: a fast answer: got %s; want 200", r)
		}
		start := time.Now()
		if r := get("timeout.example.com", "/?delay=3s"); r.Code != 504 {
			t.Errorf("timeout-server 1s: GET /?delay=3s: got %s after %s; want 504", r, time.Since(start).Round(time.Millisecond))
		} else {
			t.Logf("timeout-server 1s: 504 after %s (timeout server per attempt; defaults retry on response-timeout)", time.Since(start).Round(time.Millisecond))
		}

		// rewrite-target /app on Prefix /api.
		for _, tc := range []struct {
			path, upstream string
			code           int
		}{{"/api/v1?q=1", "/app/v1?q=1", 200}, {"/api/v1/x", "/app/v1/x", 200}, {"/api", "/app/", 200}, {"/apifoo", "", 404}, {"/status", "/app", 200}, {"/status/x", "", 404}} {
			ftWait(t, "rewrite-target: "+tc.path, 30*time.Second, func() (bool, string) {
				r := get("rewrite.example.com", tc.path)
				return r.Code == tc.code && r.Echo.Path == tc.upstream, fmt.Sprintf("%s; want %d with upstream path %q", r, tc.code, tc.upstream)
			})
		}
	})

	phase(t, "map-only annotations: a value change and a brand-new route take effect without waiting for a reload", func() {
		if _, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Patch(e.ctx, "headers", types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"haproxy-haptic.org/response-set-header":"X-Resp-Test changed\n"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ftWait(t, "response-set-header value change", 20*time.Second, func() (bool, string) {
			r := get("headers.example.com", "/")
			return r.Header.Get("X-Resp-Test") == "changed", fmt.Sprintf("%s X-Resp-Test=%q", r, r.Header.Get("X-Resp-Test"))
		})
		// A new Service (a new plain backend, run in a pool slot) with annotations that
		// are only map entries (header names already have their frontend rules).
		e.createService("late")
		e.createService("late-redirect")
		create(ing("late", map[string]string{ann + "request-set-header": "X-Team late\n", ann + "response-set-header": "X-Resp-Test late\n"},
			ftRule("late.example.com", ftPath("/", networkingv1.PathTypePrefix, "late", "http"))))
		create(ing("late-redirect", map[string]string{ann + "ssl-redirect": "true"},
			ftRule("late-redirect.example.com", ftPath("/", networkingv1.PathTypePrefix, "late-redirect", "http"))))
		if !ftWait(t, "late.example.com routed", 30*time.Second, func() (bool, string) {
			r := get("late.example.com", "/")
			return r.Code == 200 && r.backend() == "echo", r.String()
		}) {
			return
		}
		ftWait(t, "a brand-new route's request-set-header and response-set-header apply", 20*time.Second, func() (bool, string) {
			r := get("late.example.com", "/")
			return r.Echo.header("X-Team") == "late" && r.Header.Get("X-Resp-Test") == "late",
				fmt.Sprintf("%s backend saw X-Team=%v, response X-Resp-Test=%q", r, r.Echo.Headers["X-Team"], r.Header.Get("X-Resp-Test"))
		})
		ftWait(t, "a brand-new route's ssl-redirect applies", 20*time.Second, func() (bool, string) {
			r := get("late-redirect.example.com", "/p")
			return r.Code == 308 && r.Header.Get("Location") == "https://late-redirect.example.com/p", fmt.Sprintf("%s Location=%q", r, r.Header.Get("Location"))
		})
	})

	phase(t, "an invalid annotation value leaves its Ingress out (the rest is deployed); fixing it recovers", func() {
		create(ing("bad", map[string]string{ann + "timeout-server": "30 seconds"},
			ftRule("bad.example.com", ftPath("/", networkingv1.PathTypePrefix, "echo", "http"))))
		want := "Ingress " + e.ns + "/bad: annotation haproxy-haptic.org/timeout-server"
		ftWait(t, "a LeftOut Event on the Ingress naming the annotation", 30*time.Second, func() (bool, string) {
			out := e.kubectl("get", "events", "--field-selector", "involvedObject.name=bad,reason=LeftOut", "-o", "jsonpath={.items[*].message}")
			return strings.Contains(out, want) && e.metric("haptic_objects_left_out", `resource="ingresses"`) >= 1, out
		})
		out := e.kubectl("get", "haproxytemplateconfig/haptic-config", "-o", `jsonpath={.status.conditions[?(@.type=="Rendered")].status}`)
		if out != "True" {
			t.Errorf("HAProxyTemplateConfig Rendered condition: %q; want True (one bad Ingress does not fail the render)", out)
		}
		time.Sleep(3 * time.Second)
		if r := get("bad.example.com", "/"); r.Code != 404 {
			t.Errorf("the Ingress with an invalid annotation is routed: %s", r)
		}
		for _, h := range []string{"paths.example.com/exact", "a.wild.example.com/", "headers.example.com/"} {
			host, path, _ := strings.Cut(h, "/")
			if r := get(host, "/"+path); r.Code != 200 {
				t.Errorf("the previous config must keep serving: GET http://%s: %s", h, r)
			}
		}
		if _, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Patch(e.ctx, "bad", types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"haproxy-haptic.org/timeout-server":"30s"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		ftWait(t, "the fixed Ingress is routed", 30*time.Second, func() (bool, string) {
			r := get("bad.example.com", "/")
			return r.Code == 200 && r.backend() == "echo", r.String()
		})
		if !strings.Contains(e.podExec(pod, "cat", "/etc/haproxy/haproxy.cfg"), "timeout server 30s") {
			t.Errorf("the fixed timeout-server is not in haproxy.cfg")
		}
		if r := get("paths.example.com", "/foo/bar"); r.Code != 200 || r.backend() != "echo2" {
			t.Errorf("after recovery: GET paths.example.com/foo/bar: %s", r)
		}
	})
}

// ---- helpers shared by the feature tests ----

// ftEcho is what echo-basic answers: the request it saw and the pod that saw it.
type ftEcho struct {
	Path      string              `json:"path"`
	Host      string              `json:"host"`
	Method    string              `json:"method"`
	Headers   map[string][]string `json:"headers"`
	Namespace string              `json:"namespace"`
	Pod       string              `json:"pod"`
}

func ftEchoOf(body []byte) ftEcho {
	var r ftEcho
	_ = json.Unmarshal(body, &r)
	return r
}

// header returns the request header's values as the backend saw them, joined.
func (r ftEcho) header(name string) string {
	return strings.Join(r.Headers[http.CanonicalHeaderKey(name)], ",")
}

// ftResp is one response (or error).
type ftResp struct {
	Code   int
	Header http.Header
	Body   []byte
	Echo   ftEcho
	TLS    *tls.ConnectionState
	Err    error
}

// backend is the Deployment of the echo pod that answered ("" if none did).
func (r ftResp) backend() string {
	parts := strings.Split(r.Echo.Pod, "-")
	if len(parts) < 3 {
		return ""
	}
	return strings.Join(parts[:len(parts)-2], "-")
}

func (r ftResp) String() string {
	if r.Err != nil {
		return "error: " + r.Err.Error()
	}
	if r.Echo.Pod != "" {
		return fmt.Sprintf("%d from %s (%s %s)", r.Code, r.Echo.Pod, r.Echo.Method, r.Echo.Path)
	}
	body := string(r.Body)
	if len(body) > 120 {
		body = body[:120] + "…"
	}
	return fmt.Sprintf("%d %q", r.Code, body)
}

// ftClient sends requests from inside the cluster's network namespace: never
// follows redirects, never adds or decodes Accept-Encoding, one connection per
// request. https clients verify against the test's CA with SNI = the Host.
type ftClient struct {
	netns string
	pool  *x509.CertPool
	plain *http.Client
}

func newFtClient(e *env, pool *x509.CertPool) *ftClient {
	return &ftClient{netns: e.c.Config.Netns, pool: pool, plain: ftHTTPClient(e.c.Config.Netns, nil)}
}

func ftHTTPClient(ns string, tlsConfig *tls.Config) *http.Client {
	c := netns.HTTPClient(ns, &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true, DisableCompression: true}, 5*time.Second)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// do sends method url with Host host and header pairs hdr (name, value, …).
func (c *ftClient) do(method, url, host string, hdr ...string) ftResp {
	client := c.plain
	if strings.HasPrefix(url, "https://") {
		sni, _, err := net.SplitHostPort(host)
		if err != nil {
			sni = host
		}
		client = ftHTTPClient(c.netns, &tls.Config{ServerName: sni, RootCAs: c.pool})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return ftResp{Err: err}
	}
	req.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return ftResp{Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	r := ftResp{Code: resp.StatusCode, Header: resp.Header, Body: body, TLS: resp.TLS, Err: err}
	if resp.Header.Get("Content-Encoding") == "" {
		r.Echo = ftEchoOf(body)
	}
	return r
}

func ftBasic(user, pass string) string {
	req, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	req.SetBasicAuth(user, pass)
	return req.Header.Get("Authorization")
}

// ftWait polls cond every 200ms until it holds (true) or the time is up, which it
// reports with t.Errorf (false): the test goes on to its other checks.
func ftWait(t *testing.T, what string, within time.Duration, cond func() (bool, string)) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return true
		}
		last = msg
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("FAIL %s: not within %s; last: %s", what, within, last)
	return false
}

// ftTable runs every case until all of them hold at once or the time is up; then
// it reports each case that still does not hold.
func ftTable(t *testing.T, what string, within time.Duration, cases []func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var failed []string
		for _, c := range cases {
			if ok, msg := c(); !ok {
				failed = append(failed, msg)
			}
		}
		if len(failed) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, msg := range failed {
				t.Errorf("%s: %s", what, msg)
			}
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ftDumpOnFailure logs the pod's haproxy.cfg and maps when the test failed.
func ftDumpOnFailure(t *testing.T, e *env, podOf func() string) {
	t.Cleanup(func() {
		if !t.Failed() || e.ctx.Err() != nil {
			return
		}
		pod := podOf()
		if pod == "" {
			t.Logf("no HAProxy pod to read haproxy.cfg from")
			return
		}
		t.Logf("haproxy.cfg of %s:\n%s", pod, e.podExec(pod, "cat", "/etc/haproxy/haproxy.cfg"))
		t.Logf("maps of %s:\n%s", pod, e.podExec(pod, "sh", "-c", "for f in /etc/haproxy/maps/*; do echo \"== $f\"; cat $f; done; ls -l /etc/haproxy/ssl 2>/dev/null"))
	})
}

// ftRule is an Ingress rule for host with paths.
func ftRule(host string, paths ...networkingv1.HTTPIngressPath) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{
		HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}}}
}

// ftPath routes path to svc's port: a name (string) or a number (int).
func ftPath(path string, pt networkingv1.PathType, svc string, port any) networkingv1.HTTPIngressPath {
	p := networkingv1.ServiceBackendPort{}
	switch v := port.(type) {
	case string:
		p.Name = v
	case int:
		p.Number = int32(v)
	}
	return networkingv1.HTTPIngressPath{Path: path, PathType: &pt, Backend: networkingv1.IngressBackend{
		Service: &networkingv1.IngressServiceBackend{Name: svc, Port: p}}}
}

// ftEchoDeployment creates a Deployment of echo-basic pods labelled app=<name>
// in namespace ns (pod names start with name-).
func ftEchoDeployment(t *testing.T, e *env, ns, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	envFrom := func(n, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: n, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	_, err := e.c.Client.AppsV1().Deployments(ns).Create(e.ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "echo",
					Image: "gcr.io/k8s-staging-gateway-api/echo-basic:v20240412-v1.0.0-394-g40c666fd",
					Env: []corev1.EnvVar{envFrom("POD_NAME", "metadata.name"), envFrom("NAMESPACE", "metadata.namespace"),
						envFrom("POD_IP", "status.podIP")},
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 3000}},
					ReadinessProbe: &corev1.Probe{PeriodSeconds: 2, ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt(3000)}}},
				}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create deployment %s/%s: %v", ns, name, err)
	}
}

// ftService creates a Service name in ns selecting app=app, port portName:port → http.
func ftService(t *testing.T, e *env, ns, name, app, portName string, port int32) {
	t.Helper()
	_, err := e.c.Client.CoreV1().Services(ns).Create(e.ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": app},
			Ports: []corev1.ServicePort{{Name: portName, Port: port, TargetPort: intstr.FromString("http")}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service %s/%s: %v", ns, name, err)
	}
}

// ftCA is the test's own certificate authority.
type ftCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newFtCA(t *testing.T) *ftCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "haptic e2e test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &ftCA{cert: cert, key: key, pool: pool}
}

// leaf returns a PEM certificate for hosts signed by the CA, and its PEM key.
func (ca *ftCA) leaf(t *testing.T, hosts ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: hosts[0]}, DNSNames: hosts,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// ftTLSSecret creates a kubernetes.io/tls Secret name in ns for hosts.
func ftTLSSecret(t *testing.T, e *env, ns, name string, ca *ftCA, hosts ...string) {
	t.Helper()
	crt, key := ca.leaf(t, hosts...)
	_, err := e.c.Client.CoreV1().Secrets(ns).Create(e.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create TLS secret %s/%s: %v", ns, name, err)
	}
}
