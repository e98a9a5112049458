package render

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// selfSigned returns a PEM certificate for key and the key as PEM (PKCS#8, or the
// legacy encoding when legacy is set).
func selfSigned(t *testing.T, key crypto.Signer, legacy bool) (string, string) {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "a.example.com"},
		DNSNames:     []string{"a.example.com"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	var block *pem.Block
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if legacy {
			block = &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}
		}
	case *ecdsa.PrivateKey:
		if legacy {
			b, err := x509.MarshalECPrivateKey(k)
			if err != nil {
				t.Fatal(err)
			}
			block = &pem.Block{Type: "EC PRIVATE KEY", Bytes: b}
		}
	}
	if block == nil {
		b, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		block = &pem.Block{Type: "PRIVATE KEY", Bytes: b}
	}
	return cert, string(pem.EncodeToMemory(block))
}

func TestTLSProblem(t *testing.T) {
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherEC, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)

	ecCert, ecPEM := selfSigned(t, ecKey, false)
	_, ecLegacyPEM := selfSigned(t, ecKey, true)
	_, otherPEM := selfSigned(t, otherEC, false)
	rsaCert, rsaLegacyPEM := selfSigned(t, rsaKey, true)
	edCert, edPEM := selfSigned(t, edKey, false)

	// Every valid pair, in each key encoding; a chain with a second certificate.
	for name, c := range map[string][2]string{
		"ec pkcs8":    {ecCert, ecPEM},
		"ec sec1":     {ecCert, ecLegacyPEM},
		"rsa pkcs1":   {rsaCert, rsaLegacyPEM},
		"ed25519":     {edCert, edPEM},
		"chain":       {ecCert + rsaCert, ecPEM},
		"surrounding": {"subject=a.example.com\n" + ecCert + "\n", "\n" + ecPEM + "trailing text\n"},
	} {
		if got := tlsProblem(c[0], c[1]); got != "" {
			t.Errorf("%s: %q, want no problem", name, got)
		}
	}

	garbageCert := "-----BEGIN CERTIFICATE-----\n" + base64.StdEncoding.EncodeToString([]byte("not a certificate at all")) + "\n-----END CERTIFICATE-----\n"
	encrypted := "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIBvTBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----\n"
	garbageKey := "-----BEGIN PRIVATE KEY-----\n" + base64.StdEncoding.EncodeToString([]byte("secret-garbage-bytes")) + "\n-----END PRIVATE KEY-----\n"
	for name, c := range map[string]struct{ cert, key, want string }{
		"not pem":          {"not a certificate", ecPEM, "tls.crt holds no PEM certificate"},
		"empty":            {"", "", "tls.crt holds no PEM certificate"},
		"garbage cert":     {garbageCert, ecPEM, "tls.crt holds a certificate that does not parse"},
		"key in tls.crt":   {ecCert + ecPEM, ecPEM, "tls.crt holds a private key"},
		"no key":           {ecCert, ecCert, "tls.key holds no PEM private key"},
		"garbage key":      {ecCert, garbageKey, "tls.key holds a private key that does not parse"},
		"encrypted key":    {ecCert, encrypted, "tls.key holds an encrypted private key"},
		"two keys":         {ecCert, ecPEM + otherPEM, "tls.key holds more than one private key"},
		"mismatch":         {ecCert, otherPEM, "tls.key does not match the certificate in tls.crt"},
		"mismatch kinds":   {ecCert, rsaLegacyPEM, "tls.key does not match the certificate in tls.crt"},
		"key of 2nd chain": {ecCert + rsaCert, rsaLegacyPEM, "tls.key does not match the certificate in tls.crt"},
	} {
		got := tlsProblem(c.cert, c.key)
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
		// A reason is a fixed phrase: nothing of the input, and one line.
		for _, frag := range []string{"MII", "BEGIN", "secret", "not a certificate", "\n"} {
			if strings.Contains(got, frag) {
				t.Errorf("%s: reason %q holds %q", name, got, frag)
			}
		}
	}
}

func TestCAProblem(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cert, keyPEM := selfSigned(t, key, false)
	for name, c := range map[string]struct {
		pem  string
		want string // "" or a part of the reason
	}{
		"one":       {cert, ""},
		"bundle":    {cert + cert, ""},
		"empty":     {"", "no PEM certificate"},
		"text":      {"not a certificate", "no PEM certificate"},
		"with key":  {cert + keyPEM, "PRIVATE KEY"},
		"corrupted": {"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "does not parse"},
	} {
		got := caProblem(c.pem)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: caProblem = %q, want %q", name, got, c.want)
		}
	}
}
