package runtime

import (
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
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// selfSigned returns a PEM certificate and key for name.
func selfSigned(t testing.TB, name string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) +
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
}

// servedName is the CN HAProxy presents for sni.
func servedName(t *testing.T, addr, sni string) string {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("tls to %s (%s): %v", addr, sni, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// TestSSLOpsRealHAProxy adds a certificate and its crt-list line, replaces a
// certificate's content and removes both again, checking what HAProxy serves per
// SNI name after each step.
func TestSSLOpsRealHAProxy(t *testing.T) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not installed: make test installs it (apt-get install -y haproxy)")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pem"), filepath.Join(dir, "b.pem")
	crtList := filepath.Join(dir, "certs.crt-list")
	for p, c := range map[string]string{a: selfSigned(t, "a.test"), crtList: a + " a.test\n"} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := fmt.Sprintf("global\n    stats socket %s/admin.sock mode 600 level admin\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\nfrontend fe\n    bind %s ssl crt-list %s\n    http-request return status 200\n", dir, addr, crtList)
	cfgFile := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("haproxy", "-W", "-S", filepath.Join(dir, "master.sock"), "-f", cfgFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	admin := &Client{Path: filepath.Join(dir, "admin.sock"), Timeout: 2 * time.Second, RetryFor: 5 * time.Second}
	ctx := context.Background()
	run := func(ops ...Operation) {
		t.Helper()
		for _, op := range ops {
			if err := op.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := op.Run(ctx, admin, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}); err == nil {
			c.Close()
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("haproxy did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := servedName(t, addr, "b.test"); got != "a.test" {
		t.Fatalf("before: b.test served %q, want the default a.test", got)
	}

	run(&SetSSLCert{Path: b, PEM: selfSigned(t, "b.test"), New: true}, &AddCrtListEntry{CrtList: crtList, Line: b + " b.test"})
	if got := servedName(t, addr, "b.test"); got != "b.test" {
		t.Fatalf("after add: b.test served %q", got)
	}
	run(&SetSSLCert{Path: a, PEM: selfSigned(t, "a2.test")})
	if got := servedName(t, addr, "a.test"); got != "a2.test" {
		t.Fatalf("after replace: a.test served %q, want the new certificate a2.test", got)
	}
	run(&DelCrtListEntry{CrtList: crtList, Cert: b}, &DelSSLCert{Path: b})
	if got := servedName(t, addr, "b.test"); got != "a2.test" {
		t.Fatalf("after delete: b.test served %q, want the default", got)
	}
	out, err := admin.Do(ctx, "show ssl crt-list "+crtList)
	if err != nil || strings.Contains(out, b) {
		t.Fatalf("crt-list still lists %s: %q %v", b, out, err)
	}
}

func TestRedactHidesCertificates(t *testing.T) {
	op := &SetSSLCert{Path: "/etc/haproxy/ssl/x.pem", PEM: "-----BEGIN PRIVATE KEY-----\nsecret\n"}
	data, _ := json.Marshal(Op{Redact(op)})
	if strings.Contains(string(data), "secret") || !strings.Contains(string(data), "/etc/haproxy/ssl/x.pem") {
		t.Fatalf("redacted op: %s", data)
	}
	if op.PEM == "" || !strings.Contains(op.PEM, "secret") {
		t.Fatal("Redact must not modify the operation")
	}
}
