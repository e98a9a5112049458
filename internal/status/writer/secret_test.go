package writer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestKeepCertificateValidity(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	k := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
	secret := func(c, k []byte) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "s", "namespace": "ns"},
			"data":     map[string]any{"tls.crt": base64.StdEncoding.EncodeToString(c), "tls.key": base64.StdEncoding.EncodeToString(k)}}}
	}
	for _, tc := range []struct {
		name string
		crt  []byte
		key  []byte
		want bool
	}{
		{"valid", crt, k, true},
		{"malformed", []byte("not a certificate"), []byte("not a key"), false},
		{"key missing", crt, nil, false},
	} {
		out, err := keepCertificateValidity(secret(tc.crt, tc.key))
		if err != nil {
			t.Fatal(err)
		}
		u := out.(*unstructured.Unstructured)
		valid, _, _ := unstructured.NestedBool(u.Object, "validCertificate")
		if valid != tc.want || u.GetName() != "s" || u.GetNamespace() != "ns" {
			t.Errorf("%s: valid=%v name=%s/%s", tc.name, valid, u.GetNamespace(), u.GetName())
		}
		if s := fmt.Sprint(u.Object); strings.Contains(s, "tls.key") || strings.Contains(s, "PRIVATE") {
			t.Errorf("%s: key material kept in the cache: %s", tc.name, s)
		}
	}

	// ca.crt: a CA bundle beside the certificate (cert-manager's layout).
	for _, tc := range []struct {
		name string
		ca   string
		want bool
	}{
		{"CA bundle", base64.StdEncoding.EncodeToString(crt), true},
		{"no ca.crt", "", false},
		{"a key in ca.crt", base64.StdEncoding.EncodeToString(k), false},
		{"not base64", "***", false},
	} {
		in := secret(crt, k)
		if tc.ca != "" {
			in.Object["data"].(map[string]any)["ca.crt"] = tc.ca
		}
		out, _ := keepCertificateValidity(in)
		u := out.(*unstructured.Unstructured)
		if ca, _, _ := unstructured.NestedBool(u.Object, "validCABundle"); ca != tc.want {
			t.Errorf("%s: validCABundle=%v", tc.name, ca)
		}
		if s := fmt.Sprint(u.Object); strings.Contains(s, "CERTIFICATE") || strings.Contains(s, "PRIVATE") {
			t.Errorf("%s: certificate or key material kept in the cache: %s", tc.name, s)
		}
	}
}
