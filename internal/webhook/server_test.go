package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeCert(t *testing.T, dir string, c Certificate, mod time.Time) {
	t.Helper()
	for name, data := range map[string][]byte{"tls.crt": c.Cert, "tls.key": c.Key} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
}

// The server answers over TLS with the mounted certificate and picks up a rotated
// one without a restart.
func TestServerReloadsCertificate(t *testing.T) {
	dir := t.TempDir()
	first, err := NewCertificate([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	writeCert(t, dir, first, time.Now().Add(-time.Hour))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := &Server{Listener: ln, CertDir: dir, Handler: &Handler{Validator: &decider{}}}
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	get := func(ca []byte) (string, error) {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		resp, err := client.Get("https://" + ln.Addr().String() + "/healthz")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), nil
	}
	if body, err := get(first.CA); err != nil || body != "ok" {
		t.Fatalf("with the first certificate: %q %v", body, err)
	}
	second, err := NewCertificate([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	writeCert(t, dir, second, time.Now())
	if body, err := get(second.CA); err != nil || body != "ok" {
		t.Fatalf("after rotation: %q %v", body, err)
	}
	if _, err := get(first.CA); err == nil {
		t.Fatal("the rotated-out certificate is still served")
	}
}

func TestServerNeedsCertificate(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv := &Server{Listener: ln, CertDir: t.TempDir(), Handler: &Handler{Validator: &decider{}}}
	if err := srv.Run(context.Background()); err == nil {
		t.Fatal("a server without certificate files started")
	}
}
