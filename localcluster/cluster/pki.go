package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certSpec describes one leaf certificate signed by the cluster CA.
type certSpec struct {
	name         string // file stem under pki/
	commonName   string
	organization []string
	ips          []string
	dnsNames     []string
	server       bool
	client       bool
}

// leafCerts are the certificates the cluster components use. Controllers, the
// scheduler and the node use the admin credential: this is a local test cluster.
var leafCerts = []certSpec{
	{
		name: "apiserver", commonName: "kube-apiserver", server: true,
		ips: []string{APIServerIP, KubernetesClusterIP, "127.0.0.1"},
		dnsNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	},
	{name: "admin", commonName: "haptic-admin", organization: []string{"system:masters"}, client: true},
	{name: "front-proxy-client", commonName: "front-proxy-client", client: true},
}

// ensurePKI creates the CA, leaf certificates and service-account key pair
// unless they already exist (a reused cluster keeps its credentials).
func ensurePKI(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create pki dir: %w", err)
	}
	if fileExists(filepath.Join(dir, "sa.pub")) && fileExists(filepath.Join(dir, "admin.crt")) {
		return nil
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now().Add(-time.Hour)
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "haptic-local-cluster-ca"},
		NotBefore:             now,
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("parse CA certificate: %w", err)
	}
	if err := writeCertAndKey(dir, "ca", caDER, caKey); err != nil {
		return err
	}
	for i, spec := range leafCerts {
		if err := writeLeaf(dir, spec, int64(i+2), caCert, caKey, now); err != nil {
			return err
		}
	}
	return writeServiceAccountKeys(dir)
}

func writeLeaf(dir string, spec certSpec, serial int64, ca *x509.Certificate, caKey crypto.Signer, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate %s key: %w", spec.name, err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: spec.commonName, Organization: spec.organization},
		NotBefore:    now,
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:     spec.dnsNames,
	}
	for _, ip := range spec.ips {
		template.IPAddresses = append(template.IPAddresses, net.ParseIP(ip))
	}
	if spec.server {
		template.ExtKeyUsage = append(template.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if spec.client {
		template.ExtKeyUsage = append(template.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create %s certificate: %w", spec.name, err)
	}
	return writeCertAndKey(dir, spec.name, der, key)
}

func writeCertAndKey(dir, name string, der []byte, key crypto.Signer) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal %s key: %w", name, err)
	}
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der, 0o644); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".key"), "PRIVATE KEY", keyDER, 0o600)
}

// writeServiceAccountKeys writes the RSA key pair that signs service-account tokens.
func writeServiceAccountKeys(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal service-account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("marshal service-account public key: %w", err)
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pubDER, 0o644)
}

func writePEM(path, blockType string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeKubeconfig writes the admin kubeconfig pointing at the API server.
func writeKubeconfig(cfg Config) error {
	pki := cfg.PKIDir()
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: haptic
  cluster:
    server: %s
    certificate-authority: %s
contexts:
- name: haptic
  context:
    cluster: haptic
    user: admin
current-context: haptic
users:
- name: admin
  user:
    client-certificate: %s
    client-key: %s
`, APIServerURL(), filepath.Join(pki, "ca.crt"), filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err := os.WriteFile(cfg.Kubeconfig(), []byte(content), 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}
