package e2e

import (
	"bufio"
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
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// testCA issues certificates for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// issue returns a PEM certificate and key for name (a DNS name for servers).
func (ca *testCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}))
}

// TestGatewayTLSPassthroughAndClientCertificates: a TLSRoute on a Passthrough
// listener takes the client's TLS stream, by its SNI, to a TLS backend that
// terminates it itself (the client sees the backend's certificate and the backend
// the client's SNI); an HTTPS listener whose port validates client certificates
// (Gateway spec.tls.frontend, CA from a ConfigMap) refuses a client without a
// certificate or with one of another CA, and serves one with a valid certificate;
// with the CA from a TLS Secret's ca.crt the other CA's client is served.
func TestGatewayTLSPassthroughAndClientCertificates(t *testing.T) {
	g := setupGateways(t, "")
	ca, rogue := newTestCA(t, "haptic test CA"), newTestCA(t, "rogue CA")
	backendCrt, backendKey := ca.issue(t, "abc.example.com", x509.ExtKeyUsageServerAuth)
	gwCrt, gwKey := ca.issue(t, "secure.example.com", x509.ExtKeyUsageServerAuth)
	clientCrt, clientKey := ca.issue(t, "client", x509.ExtKeyUsageClientAuth)
	rogueCrt, rogueKey := rogue.issue(t, "client", x509.ExtKeyUsageClientAuth)

	core := g.c.Client.CoreV1()
	for name, pair := range map[string][2]string{"backend-tls": {backendCrt, backendKey}, "gw-tls": {gwCrt, gwKey}} {
		if _, err := core.Secrets(g.ns).Create(g.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name},
			Type: corev1.SecretTypeTLS, StringData: map[string]string{"tls.crt": pair[0], "tls.key": pair[1]}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := core.ConfigMaps(g.ns).Create(g.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "client-ca"},
		Data: map[string]string{"ca.crt": ca.pem}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// echo-basic's TCP echo server with TLS on 8443 (the conformance suite's tcp-backend).
	g.applyText(`apiVersion: apps/v1
kind: Deployment
metadata: {name: tls-echo}
spec:
  replicas: 1
  selector: {matchLabels: {app: tls-echo}}
  template:
    metadata: {labels: {app: tls-echo}}
    spec:
      containers:
      - name: echo
        image: echo-basic
        env:
        - {name: TCP_ECHO_SERVER, value: "1"}
        - {name: TLS_SERVER_CERT, value: /etc/secret-volume/crt}
        - {name: TLS_SERVER_PRIV_KEY, value: /etc/secret-volume/key}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        volumeMounts: [{name: tls, mountPath: /etc/secret-volume}]
      volumes:
      - name: tls
        secret:
          secretName: backend-tls
          items: [{key: tls.crt, path: crt}, {key: tls.key, path: key}]
---
apiVersion: v1
kind: Service
metadata: {name: tls-echo}
spec:
  selector: {app: tls-echo}
  ports: [{name: tls, port: 8443, targetPort: 8443}]
`)

	passthrough, wildcard := gwv1.TLSModePassthrough, gwv1.Hostname("*.example.com")
	gateway := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: gwv1.GatewaySpec{
		GatewayClassName: gwv1.ObjectName(g.class),
		Listeners: []gwv1.Listener{
			{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType},
			{Name: "tls", Port: 443, Protocol: gwv1.TLSProtocolType, Hostname: &wildcard, TLS: &gwv1.ListenerTLSConfig{Mode: &passthrough}},
			{Name: "https", Port: 8443, Protocol: gwv1.HTTPSProtocolType,
				TLS: &gwv1.ListenerTLSConfig{CertificateRefs: []gwv1.SecretObjectReference{{Name: "gw-tls"}}}},
		},
		TLS: &gwv1.GatewayTLSConfig{Frontend: &gwv1.FrontendTLSConfig{Default: gwv1.TLSConfig{
			Validation: &gwv1.FrontendTLSValidation{CACertificateRefs: []gwv1.ObjectReference{{Kind: "ConfigMap", Name: "client-ca"}}}}}},
	}}
	if _, err := g.gw.GatewayV1().Gateways(g.ns).Create(g.ctx, gateway, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tlsPort := gwv1.PortNumber(8443)
	if _, err := g.gw.GatewayV1().TLSRoutes(g.ns).Create(g.ctx, &gwv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Name: "abc"},
		Spec: gwv1.TLSRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "edge"}}},
			Hostnames: []gwv1.Hostname{"abc.example.com"},
			Rules: []gwv1.TLSRouteRule{{BackendRefs: []gwv1.BackendRef{{BackendObjectReference: gwv1.BackendObjectReference{
				Name: "tls-echo", Port: &tlsPort}}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.gw.GatewayV1().HTTPRoutes(g.ns).Create(g.ctx, httpRoute("secure", "edge", "secure.example.com", "/"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	addr, err := g.gatewayAddress("edge", 180*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	dialer := netns.Dialer{Name: g.c.Config.Netns, Timeout: 5 * time.Second}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)

	// Passthrough: the handshake verifies the backend's certificate for
	// abc.example.com (HAProxy holds none), and the backend reports our SNI.
	g.eventually("the TLSRoute reaches the TLS backend with the client's SNI", 90*time.Second, func() (bool, string) {
		sni, err := tcpEchoSNI(g.ctx, dialer, net.JoinHostPort(addr, "443"), &tls.Config{ServerName: "abc.example.com", RootCAs: roots})
		return err == nil && sni == "abc.example.com", fmt.Sprintf("sni %q err %v", sni, err)
	})
	if _, err := tcpEchoSNI(g.ctx, dialer, net.JoinHostPort(addr, "443"), &tls.Config{ServerName: "other.example.org", RootCAs: roots}); err == nil {
		t.Error("an SNI no TLSRoute names reached a backend")
	}

	// Client certificates on the HTTPS port.
	get := func(cert *tls.Certificate) (int, error) {
		cfg := &tls.Config{ServerName: "secure.example.com", RootCAs: roots}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: dialer.DialContext, TLSClientConfig: cfg}}
		defer client.CloseIdleConnections()
		req, err := http.NewRequestWithContext(g.ctx, http.MethodGet, "https://"+net.JoinHostPort(addr, "8443")+"/", nil)
		if err != nil {
			return 0, err
		}
		req.Host = "secure.example.com"
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	valid, err := tls.X509KeyPair([]byte(clientCrt), []byte(clientKey))
	if err != nil {
		t.Fatal(err)
	}
	other, err := tls.X509KeyPair([]byte(rogueCrt), []byte(rogueKey))
	if err != nil {
		t.Fatal(err)
	}
	g.eventually("a client with a certificate of the ConfigMap's CA is served", 90*time.Second, func() (bool, string) {
		code, err := get(&valid)
		return code == 200, fmt.Sprintf("code %d err %v", code, err)
	})
	for name, cert := range map[string]*tls.Certificate{"no certificate": nil, "a certificate of another CA": &other} {
		if code, err := get(cert); err == nil {
			t.Errorf("a client with %s got %d, want a refused handshake", name, code)
		}
	}

	// The CA from a TLS Secret's ca.crt instead (cert-manager's layout): now the
	// other CA's client is served and the first CA's refused.
	if _, err := core.Secrets(g.ns).Create(g.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rogue-ca"}, Type: corev1.SecretTypeTLS,
		StringData: map[string]string{"tls.crt": rogueCrt, "tls.key": rogueKey, "ca.crt": rogue.pem}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	g.eventually("the Gateway's CA reference names the Secret", 30*time.Second, func() (bool, string) {
		cur, err := g.gw.GatewayV1().Gateways(g.ns).Get(g.ctx, "edge", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		cur.Spec.TLS.Frontend.Default.Validation.CACertificateRefs = []gwv1.ObjectReference{{Kind: "Secret", Name: "rogue-ca"}}
		_, err = g.gw.GatewayV1().Gateways(g.ns).Update(g.ctx, cur, metav1.UpdateOptions{})
		return err == nil, fmt.Sprint(err)
	})
	g.eventually("a client with a certificate of the Secret's CA is served", 90*time.Second, func() (bool, string) {
		code, err := get(&other)
		return code == 200, fmt.Sprintf("code %d err %v", code, err)
	})
	if code, err := get(&valid); err == nil {
		t.Errorf("a client of the CA no longer referenced got %d, want a refused handshake", code)
	}
}

// tcpEchoSNI opens a TLS connection, asks echo-basic's TCP echo server for its
// view (TEST) and returns the SNI it saw.
func tcpEchoSNI(ctx context.Context, d netns.Dialer, addr string, cfg *tls.Config) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	conn := tls.Client(raw, cfg)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if err := conn.HandshakeContext(ctx); err != nil {
		return "", err
	}
	if _, err := fmt.Fprint(conn, "TEST\n"); err != nil {
		return "", err
	}
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue // the welcome message
		}
		var v struct {
			TLS struct {
				ServerName string `json:"serverName"`
			} `json:"tls"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return "", err
		}
		return v.TLS.ServerName, nil
	}
	return "", fmt.Errorf("no answer: %v", sc.Err())
}
