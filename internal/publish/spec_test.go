package publish

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

const certPEM = "-----BEGIN PRIVATE KEY-----\nTOP-SECRET-KEY-MATERIAL\n-----END PRIVATE KEY-----\n"

func smallBundle() *bundle.Bundle {
	return bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf("global\n  daemon\n")},
		{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("a.example.com be_a\n")},
		{Kind: bundle.KindMap, Name: "aaa.map", Content: bundle.TextOf("x y\n")},
		{Kind: bundle.KindFile, Name: "503.http", Content: bundle.TextOf("HTTP/1.0 503\r\n\r\n")},
		{Kind: bundle.KindCert, Name: "site.pem", Content: bundle.TextOf(certPEM)},
		{Kind: bundle.KindCrtList, Name: "certs.list", Content: bundle.TextOf("/etc/haproxy/ssl/site.pem\n")},
	})
}

func TestBuildSpecSmall(t *testing.T) {
	b := smallBundle()
	spec := BuildSpec(b, "haptic-config", 0)
	if spec.Checksum != b.Hash || spec.Source != "haptic-config" {
		t.Fatalf("checksum/source = %q/%q", spec.Checksum, spec.Source)
	}
	if spec.Config.Name != "haproxy.cfg" || spec.Config.Content != "global\n  daemon\n" || spec.Config.Encoding != "" ||
		spec.Config.Checksum != bundle.HashContent("global\n  daemon\n") {
		t.Errorf("config = %+v", spec.Config)
	}
	if len(spec.Maps) != 2 || spec.Maps[0].Name != "aaa.map" || spec.Maps[1].Name != "host.map" {
		t.Errorf("maps = %+v", spec.Maps)
	}
	if len(spec.Files) != 1 || spec.Files[0].Name != "503.http" {
		t.Errorf("files = %+v", spec.Files)
	}
	if len(spec.CrtLists) != 1 || spec.CrtLists[0].Content != "/etc/haproxy/ssl/site.pem\n" {
		t.Errorf("crt-lists = %+v", spec.CrtLists)
	}
	want := []v1alpha1.FileChecksum{{Name: "site.pem", Checksum: bundle.HashContent(certPEM)}}
	if fmt.Sprint(spec.Certificates) != fmt.Sprint(want) {
		t.Errorf("certificates = %+v, want %+v", spec.Certificates, want)
	}
	assertNoSecret(t, spec)
}

// assertNoSecret fails when certificate content appears anywhere in the spec, in
// any encoding it could be published in.
func assertNoSecret(t *testing.T, spec v1alpha1.HAProxyCfgSpec) {
	t.Helper()
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "TOP-SECRET") || strings.Contains(string(data), "PRIVATE KEY") {
		t.Fatalf("certificate content published: %s", data)
	}
	for _, f := range allFiles(spec) {
		s, err := Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s, "TOP-SECRET") {
			t.Fatalf("certificate content published in %s", f.Name)
		}
	}
}

func allFiles(spec v1alpha1.HAProxyCfgSpec) []v1alpha1.PublishedFile {
	out := []v1alpha1.PublishedFile{spec.Config}
	out = append(out, spec.Maps...)
	out = append(out, spec.Files...)
	return append(out, spec.CrtLists...)
}

// largeBundle is a 5,000-backend configuration with a host map and a certificate.
func largeBundle(backends int) *bundle.Bundle {
	var cfg, hosts, paths strings.Builder
	cfg.WriteString("global\n    master-worker\n    stats socket /var/run/haproxy.sock mode 600 level admin expose-fd listeners\n\n")
	cfg.WriteString("defaults\n    mode http\n    timeout connect 5s\n    timeout client 50s\n    timeout server 50s\n\n")
	cfg.WriteString("frontend http\n    bind :8080\n    use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map)]\n\n")
	for i := range backends {
		fmt.Fprintf(&cfg, "backend ing_bench_bench-ing-%d_bench-svc-%d_80\n    mode http\n    balance roundrobin\n    option httpchk GET /healthz\n    default-server check inter 2s fall 3 rise 2\n", i, i)
		fmt.Fprintf(&cfg, "    server SRV_1 10.244.%d.%d:%d weight 100\n    server SRV_2 10.244.%d.%d:%d weight 100\n\n", i/250, i%250, 8080+i%100, i/250, (i+1)%250, 8080+i%100)
		fmt.Fprintf(&hosts, "bench-%d.example.com ing_bench_bench-ing-%d_bench-svc-%d_80\n", i, i, i)
		fmt.Fprintf(&paths, "bench-%d.example.com/api/v1 ing_bench_bench-ing-%d_bench-svc-%d_80\n", i, i, i)
	}
	return bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(cfg.String())},
		{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(hosts.String())},
		{Kind: bundle.KindMap, Name: "path-exact.map", Content: bundle.TextOf(paths.String())},
		{Kind: bundle.KindCert, Name: "site.pem", Content: bundle.TextOf(certPEM)},
	})
}

// objectSize is the JSON size of the object the API server would store.
func objectSize(t *testing.T, spec v1alpha1.HAProxyCfgSpec) int {
	t.Helper()
	data, err := json.Marshal(v1alpha1.HAProxyCfg{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	return len(data)
}

func TestBuildSpecCompresses5000Backends(t *testing.T) {
	b := largeBundle(5000)
	raw := 0
	for _, f := range b.Files {
		raw += len(f.Content.String())
	}
	spec := BuildSpec(b, "haptic-config", 0)
	size := objectSize(t, spec)
	t.Logf("5,000 backends: %d bytes of content, HAProxyCfg object %d bytes (%.1f KiB)", raw, size, float64(size)/1024)
	if raw <= v1alpha1.DefaultCompressionThreshold {
		t.Fatalf("fixture too small to test compression: %d bytes", raw)
	}
	if size > 512<<10 {
		t.Errorf("object is %d bytes; want well under the 1.5 MiB limit (< 512 KiB)", size)
	}
	for _, f := range allFiles(spec) {
		if f.Encoding != v1alpha1.EncodingGzipBase64 || f.ContentOmitted {
			t.Errorf("%s: encoding %q, omitted %v", f.Name, f.Encoding, f.ContentOmitted)
		}
		got, err := Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		if bundle.HashContent(got) != f.Checksum {
			t.Errorf("%s: decoded content does not match its checksum", f.Name)
		}
	}
	assertNoSecret(t, spec)
}

func TestBuildSpecThreshold(t *testing.T) {
	b := smallBundle()
	spec := BuildSpec(b, "c", 10) // the small bundle is over 10 bytes
	for _, f := range allFiles(spec) {
		if f.Encoding != v1alpha1.EncodingGzipBase64 {
			t.Errorf("%s not compressed above the threshold", f.Name)
		}
		got, err := Decode(f)
		if err != nil || bundle.HashContent(got) != f.Checksum {
			t.Errorf("%s: round trip failed: %v", f.Name, err)
		}
	}
	assertNoSecret(t, spec)
}

// Content that does not fit even compressed is omitted, largest first, and the
// checksums stay.
func TestBuildSpecOmitsWhatDoesNotFit(t *testing.T) {
	// Incompressible content: hex of hashes.
	var big strings.Builder
	for i := 0; big.Len() < 2*MaxContent; i++ {
		big.WriteString(bundle.HashContent(fmt.Sprint(i)))
	}
	b := bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf("global\n")},
		{Kind: bundle.KindFile, Name: "random.bin", Content: bundle.TextOf(big.String())},
	})
	spec := BuildSpec(b, "c", 0)
	if !spec.Files[0].ContentOmitted || spec.Files[0].Content != "" || spec.Files[0].Checksum != bundle.HashContent(big.String()) {
		t.Errorf("large file: omitted %v, %d content bytes", spec.Files[0].ContentOmitted, len(spec.Files[0].Content))
	}
	if spec.Config.ContentOmitted {
		t.Error("haproxy.cfg omitted though it fits")
	}
	if got, err := Decode(spec.Config); err != nil || got != "global\n" {
		t.Errorf("haproxy.cfg = %q, %v", got, err)
	}
}

func TestDecodeRejectsUnknownEncoding(t *testing.T) {
	if _, err := Decode(v1alpha1.PublishedFile{Name: "x", Encoding: "zstd"}); err == nil {
		t.Fatal("unknown encoding accepted")
	}
	if _, err := Decode(v1alpha1.PublishedFile{Name: "x", Encoding: v1alpha1.EncodingGzipBase64, Content: "!!"}); err == nil {
		t.Fatal("bad base64 accepted")
	}
}
