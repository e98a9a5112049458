package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/validate/haproxycheck"
)

// planDirCfg renders every kind of file, and haproxy.cfg references maps, general
// files and crt-lists by path (render rewrites those paths into the output dir).
// "one" → "two" adds a server and a map entry; "three" also rotates the certificate.
// The frontend binds %d (a free loopback port) and the dataplane paths are %s.
const planDirCfg = `  watchedResources:
    endpoints: {apiVersion: v1, resources: endpoints}
  haproxyConfig:
    template: |
      global
      defaults
        mode http
        timeout connect 1s
        timeout client 1s
        timeout server 1s
      frontend f
        bind 127.0.0.1:%d
        http-request set-var(txn.b) req.hdr(host),lower,map({{ pathResolver.GetPath("host.map", "map") }})
        http-request return status 404 content-type text/html file {{ pathResolver.GetPath("404.html", "file") }} if { path /missing }
        default_backend app
      # crt-list: {{ pathResolver.GetPath("list.txt", "crt-list") }}
      backend app
        balance roundrobin
      {% for _, ep := range resources.Endpoints.List() %}
        server {{ ep.Metadata.Name }} 127.0.0.1:{{ len(ep.Metadata.Name) + 9000 }} check
      {% end %}
  maps:
    host.map:
      template: |
        {% for _, ep := range resources.Endpoints.List() %}
        {{ ep.Metadata.Name }}.test app
        {% end %}
  files:
    404.html:
      template: "<p>not here</p>"
  sslCertificates:
    site.pem:
      template: |
        -----BEGIN PRIVATE KEY-----
        TOP-SECRET-KEY{% if len(resources.Endpoints.List()) > 2 %}-ROTATED{% end %}
        -----END PRIVATE KEY-----
  crtLists:
    list.txt:
      template: |
        {{ pathResolver.GetPath("site.pem", "cert") }} [alpn h2]
  validationTests:
    one:
      fixtures:
        endpoints: [{apiVersion: v1, kind: Endpoints, metadata: {name: a, namespace: x}}]
    two:
      fixtures:
        endpoints:
        - {apiVersion: v1, kind: Endpoints, metadata: {name: a, namespace: x}}
        - {apiVersion: v1, kind: Endpoints, metadata: {name: bb, namespace: x}}
    three:
      fixtures:
        endpoints:
        - {apiVersion: v1, kind: Endpoints, metadata: {name: a, namespace: x}}
        - {apiVersion: v1, kind: Endpoints, metadata: {name: bb, namespace: x}}
        - {apiVersion: v1, kind: Endpoints, metadata: {name: ccc, namespace: x}}
`

// dataplaneYAML sets the config's file layout.
func dataplaneYAML(l bundle.Layout) string {
	return "  dataplane:\n    configFile: " + l.ConfigFile + "\n    mapsDir: " + l.MapsDir +
		"\n    sslCertsDir: " + l.SSLCertsDir + "\n    generalStorageDir: " + l.GeneralStorageDir + "\n"
}

// renderTest renders a test of cfg through the pipeline, as plan does.
func renderTest(t *testing.T, cfg, test string) *bundle.Bundle {
	t.Helper()
	p, err := loadPipeline([]string{cfg}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := renderState(context.Background(), p, test)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadBundleDirRoundTrip: what `haptic render -o DIR` writes reads back as the
// rendered bundle (same hash: kinds, names and contents with production paths),
// for an absolute and a relative DIR, with the default and with custom paths.
func TestReadBundleDirRoundTrip(t *testing.T) {
	custom := bundle.Layout{ConfigFile: "/srv/hp/haproxy.cfg", MapsDir: "/srv/hp/maps", SSLCertsDir: "/srv/hp/certs", GeneralStorageDir: "/srv/general"}
	for _, c := range []struct {
		name     string
		layout   bundle.Layout
		relative bool
	}{
		{"default paths", haproxycheck.DefaultLayout, false},
		{"default paths, relative dir", haproxycheck.DefaultLayout, true},
		{"custom paths", custom, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := planDirCfg
			if c.layout != haproxycheck.DefaultLayout {
				body += dataplaneYAML(c.layout)
			}
			cfg := writeConfig(t, strings.Replace(body, "%d", "8080", 1))
			want := renderTest(t, cfg, "three")
			if len(want.Files) != 5 {
				t.Fatalf("rendered %d files, want 5", len(want.Files))
			}
			dir := filepath.Join(t.TempDir(), "out")
			if c.relative {
				t.Chdir(filepath.Dir(dir))
				dir = "out"
			}
			if code, out, errOut := runCLI(t, "render", "-f", cfg, "--test", "three", "-o", dir); code != exitOK {
				t.Fatalf("render: exit %d\n%s%s", code, out, errOut)
			}
			got, err := readBundleDir(dir, c.layout)
			if err != nil {
				t.Fatal(err)
			}
			if got.Hash != want.Hash {
				for i := range want.Files {
					if i < len(got.Files) && !got.Files[i].Equal(want.Files[i]) {
						t.Errorf("%s:\n%q\nwant %s:\n%q", got.Files[i].Target(), got.Files[i].Content.String(), want.Files[i].Target(), want.Files[i].Content.String())
					}
				}
				t.Fatalf("read back %d files (%s), rendered %d (%s)", len(got.Files), got.Hash, len(want.Files), want.Hash)
			}
			if !strings.Contains(got.Config().Content.String(), c.layout.MapsDir+"/host.map") {
				t.Fatalf("haproxy.cfg does not reference the map at its production path:\n%s", got.Config().Content.String())
			}
		})
	}
}

func TestReadBundleDirErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := readBundleDir(dir, haproxycheck.DefaultLayout)
	if err == nil || !strings.Contains(err.Error(), "etc/haproxy/haproxy.cfg") || !strings.Contains(err.Error(), "haptic render") {
		t.Fatalf("empty dir: %v", err)
	}
}

func TestSSLKind(t *testing.T) {
	if sslKind("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n") != bundle.KindCert {
		t.Error("PEM is not a certificate")
	}
	if sslKind("/etc/haproxy/ssl/a.pem [alpn h2] a.test\n") != bundle.KindCrtList || sslKind("") != bundle.KindCrtList {
		t.Error("crt-list lines are not a crt-list")
	}
}
