package haproxycheck

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// selfSignedPEM is a certificate and key in one PEM bundle, as HAProxy loads them.
func selfSignedPEM(t *testing.T, host string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) +
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

// TestCheckCertsAndCrtList: certificates, a crt-list naming them by production path,
// and a general file all land where haproxy.cfg expects them.
func TestCheckCertsAndCrtList(t *testing.T) {
	requireHAProxy(t)
	cfg := strings.Replace(validCfg, "frontend fe\n", `frontend fe_tls
    bind 127.0.0.1:8443 ssl crt-list /etc/haproxy/ssl/certs.crtlist
    errorfile 503 /etc/haproxy/general/503.http
    default_backend be_default

frontend fe
`, 1)
	files := []bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(cfg)},
		hostMap,
		{Kind: bundle.KindCert, Name: "example.pem", Content: bundle.TextOf(selfSignedPEM(t, "example.com"))},
		{Kind: bundle.KindCrtList, Name: "certs.crtlist", Content: bundle.TextOf("/etc/haproxy/ssl/example.pem example.com\n")},
		{Kind: bundle.KindFile, Name: "503.http", Content: bundle.TextOf("HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\n\r\nunavailable\n")},
	}
	c := &Checker{NoCache: true}
	if err := c.Check(context.Background(), bundle.New(files)); err != nil {
		t.Fatalf("TLS bundle rejected: %v", err)
	}
	// A crt-list naming a certificate that is not in the bundle fails, and the error
	// names the production path.
	files[3].Content = bundle.TextOf("/etc/haproxy/ssl/missing.pem example.com\n")
	err := c.Check(context.Background(), bundle.New(files))
	if err == nil || !strings.Contains(err.Error(), "/etc/haproxy/ssl/") || strings.Contains(err.Error(), "haptic-validate-") {
		t.Fatalf("want failure naming production paths, got %v", err)
	}
	t.Log(err)
}

func TestCheckNilChecker(t *testing.T) {
	requireHAProxy(t)
	var c *Checker
	if err := c.Check(context.Background(), cfgBundle(validCfg, hostMap)); err != nil {
		t.Fatalf("nil checker: %v", err)
	}
}
