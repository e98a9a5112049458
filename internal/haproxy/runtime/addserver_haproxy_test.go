package runtime

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestAddServerTLSRealHAProxy adds a dynamic server that speaks TLS to its
// backend: HAProxy verifies the backend's certificate against a CA file, sends
// the SNI and presents a client certificate, which the backend requires. A
// request through HAProxy reaches it; a server verified against the wrong CA
// does not, until that CA file's content is replaced at runtime.
func TestAddServerTLSRealHAProxy(t *testing.T) {
	_, admin, mapFile := startHAProxy(t)
	// (the files exist too, as the agent writes them before a change)
	dir := filepath.Dir(mapFile)
	serverPEM, clientPEM := selfSigned(t, "backend.test"), selfSigned(t, "gateway-client")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caFile, clientFile := write("backend-ca.pem", certOnly(t, serverPEM)), write("client.pem", clientPEM)
	otherCA := write("other-ca.pem", certOnly(t, selfSigned(t, "backend.test")))

	// The backend: TLS with a client certificate required, answering with its CN.
	serverCert, err := tls.X509KeyPair([]byte(serverPEM), []byte(serverPEM))
	if err != nil {
		t.Fatal(err)
	}
	clients := x509.NewCertPool()
	clients.AppendCertsFromPEM([]byte(clientPEM))
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{serverCert},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clients})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Client", r.TLS.PeerCertificates[0].Subject.CommonName)
		w.Header().Set("X-SNI", r.TLS.ServerName)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port

	// add server finds certificates and CA files only in HAProxy's store: a
	// configuration that names them loads them; here the CLI does.
	ctx := context.Background()
	for _, ca := range []string{caFile, otherCA} {
		content, _ := os.ReadFile(ca)
		if _, err := expect(ctx, admin, "new ssl ca-file "+ca, contains("New CA file created")); err != nil {
			t.Fatal(err)
		}
		if err := withPayload(ctx, admin, "set ssl ca-file "+ca, string(content), contains("ransaction created")); err != nil {
			t.Fatal(err)
		}
		if _, err := expect(ctx, admin, "commit ssl ca-file "+ca, contains("Success!")); err != nil {
			t.Fatal(err)
		}
	}
	if err := (&SetSSLCert{Path: clientFile, PEM: clientPEM, New: true}).Run(ctx, admin, nil); err != nil {
		t.Fatal(err)
	}
	add := func(name, ca string) {
		t.Helper()
		op := &AddServer{Backend: "be_b", Server: name, Address: "127.0.0.1", Port: port, Options: []string{
			"ssl", "verify", "required", "ca-file", ca, "sni", "str(backend.test)", "verifyhost", "backend.test", "crt", clientFile}}
		if err := op.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := op.Run(ctx, admin, nil); err != nil {
			t.Fatal(err)
		}
	}
	add("tls1", caFile)
	resp := getThrough(t, dir, "b.test")
	if resp.StatusCode != 200 || resp.Header.Get("X-Client") != "gateway-client" || resp.Header.Get("X-SNI") != "backend.test" {
		t.Fatalf("through the TLS server: %d client %q sni %q", resp.StatusCode, resp.Header.Get("X-Client"), resp.Header.Get("X-SNI"))
	}

	// Only a server that cannot verify the backend remains: HAProxy refuses it.
	if err := (&DelServer{Backend: "be_b", Server: "tls1"}).Run(ctx, admin, nil); err != nil {
		t.Fatal(err)
	}
	add("tls2", otherCA)
	if resp := getThrough(t, dir, "b.test"); resp.StatusCode < 500 {
		t.Fatalf("a backend certificate the CA does not sign was accepted: %d", resp.StatusCode)
	}

	// The CA file's content replaced at runtime: the same server now verifies.
	op := &SetSSLCAFile{Path: otherCA, PEM: certOnly(t, serverPEM)}
	if err := op.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := op.Run(ctx, admin, nil); err != nil {
		t.Fatal(err)
	}
	if resp := getThrough(t, dir, "b.test"); resp.StatusCode != 200 {
		t.Fatalf("after the CA file was replaced: %d", resp.StatusCode)
	}
}

// certOnly is the CERTIFICATE block of a PEM certificate and key.
func certOnly(t *testing.T, pemData string) string {
	t.Helper()
	block, _ := pem.Decode([]byte(pemData))
	if block == nil {
		t.Fatal("no PEM block")
	}
	return string(pem.EncodeToMemory(block))
}

// getThrough sends a request with host to the frontend startHAProxy binds (its
// port is in the haproxy.cfg beside the map).
func getThrough(t *testing.T, dir, host string) *http.Response {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(dir, "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`bind (127\.0\.0\.1:\d+)`).FindSubmatch(cfg)
	if m == nil {
		t.Fatal("no bind line")
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+string(m[1])+"/", nil)
	req.Host = host
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}
