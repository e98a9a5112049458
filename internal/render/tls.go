package render

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"strings"
)

// tlsProblem tells whether a TLS Secret's certificate chain (tls.crt) and private key
// (tls.key) are what HAProxy loads from the PEM bundle <tls.crt>\n<tls.key>: "" when
// every certificate block parses and the key parses and belongs to the first
// certificate, else a short reason. Reasons are fixed phrases: they never quote the
// input, which holds a private key.
//
// HAProxy reads the first private key of the bundle, so tls.crt must hold none.
// Expiry is not checked (HAProxy serves expired certificates).
func tlsProblem(certPEM, keyPEM string) string {
	var certs []*x509.Certificate
	rest := []byte(certPEM)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		switch {
		case block.Type == "CERTIFICATE":
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return "tls.crt holds a certificate that does not parse"
			}
			certs = append(certs, c)
		case strings.HasSuffix(block.Type, "PRIVATE KEY"):
			return "tls.crt holds a private key (it belongs in tls.key)"
		}
	}
	if len(certs) == 0 {
		return "tls.crt holds no PEM certificate"
	}

	var key crypto.PrivateKey
	var keyBlocks int
	rest = []byte(keyPEM)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if !strings.HasSuffix(block.Type, "PRIVATE KEY") {
			continue
		}
		keyBlocks++
		if key != nil {
			continue
		}
		if block.Type == "ENCRYPTED PRIVATE KEY" || block.Headers["Proc-Type"] != "" {
			return "tls.key holds an encrypted private key (HAProxy cannot read it without a passphrase)"
		}
		k, ok := parsePrivateKey(block.Bytes)
		if !ok {
			return "tls.key holds a private key that does not parse"
		}
		key = k
	}
	if keyBlocks == 0 {
		return "tls.key holds no PEM private key"
	}
	if keyBlocks > 1 {
		return "tls.key holds more than one private key"
	}

	pub, ok := key.(interface{ Public() crypto.PublicKey })
	if !ok {
		return "tls.key holds an unsupported kind of private key"
	}
	cmp, ok := certs[0].PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !cmp.Equal(pub.Public()) {
		return "tls.key does not match the certificate in tls.crt"
	}
	// The standard library's own pairing check, as the last word.
	if _, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM)); err != nil {
		return "tls.crt and tls.key do not form a usable key pair"
	}
	return ""
}

// parsePrivateKey reads a DER private key in the encodings a PEM key block uses:
// PKCS#8, PKCS#1 (RSA) and SEC 1 (EC).
func parsePrivateKey(der []byte) (crypto.PrivateKey, bool) {
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		switch k.(type) {
		case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
			return k, true
		}
		return nil, false
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, true
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, true
	}
	return nil, false
}

// caProblem says why pemText is not a CA bundle HAProxy can verify clients with
// (one or more parsable PEM certificates, nothing else that PEM-decodes as a key),
// or "" when it is one. Used for Gateway frontend client certificate validation.
func caProblem(pemText string) string {
	rest := []byte(pemText)
	n := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return "holds a PEM block of type " + block.Type + " (only certificates belong in a CA bundle)"
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return "holds a certificate that does not parse"
		}
		n++
	}
	if n == 0 {
		return "holds no PEM certificate"
	}
	return ""
}
