package cluster

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// echo-basic's cache file is named after the release echobin builds.
func TestEchoBasicBinaryNamesRelease(t *testing.T) {
	if want := "echo-basic-" + GatewayAPIVersion; node.EchoBasicBinary != want {
		t.Errorf("node.EchoBasicBinary = %q, want %q", node.EchoBasicBinary, want)
	}
}

// The Go constants must name the versions the k8sbin and echobin modules build.
func TestVersionsMatchBinaryModules(t *testing.T) {
	for mod, want := range map[string]string{
		"k8sbin":  "k8s.io/kubernetes " + KubernetesVersion,
		"echobin": "sigs.k8s.io/gateway-api " + GatewayAPIVersion,
	} {
		data, err := os.ReadFile("../" + mod + "/go.mod")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), want) {
			t.Errorf("%s/go.mod does not require %q", mod, want)
		}
	}
}

func TestPKIChains(t *testing.T) {
	dir := t.TempDir()
	if err := ensurePKI(dir); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(readCert(t, filepath.Join(dir, "ca.crt")))
	server := readCert(t, filepath.Join(dir, "apiserver.crt"))
	if _, err := server.Verify(x509.VerifyOptions{Roots: pool, DNSName: "kubernetes.default.svc"}); err != nil {
		t.Errorf("apiserver cert: %v", err)
	}
	if err := server.VerifyHostname(APIServerIP); err != nil {
		t.Errorf("apiserver cert for %s: %v", APIServerIP, err)
	}
	admin := readCert(t, filepath.Join(dir, "admin.crt"))
	if _, err := admin.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin cert: %v", err)
	}
	if len(admin.Subject.Organization) != 1 || admin.Subject.Organization[0] != "system:masters" {
		t.Errorf("admin organization = %v", admin.Subject.Organization)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err := ensurePKI(dir); err != nil { // reuse, not regenerate
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if string(before) != string(after) {
		t.Error("ensurePKI regenerated an existing CA")
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s: no PEM block", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestOtherBinDir: a node started from another checkout's bin/ is stale for this
// one; the same directory (however written) is not, nor a command line without it.
func TestOtherBinDir(t *testing.T) {
	line := func(args ...string) []byte { return []byte(strings.Join(args, "\x00") + "\x00") }
	for _, c := range []struct {
		cmdline []byte
		want    bool
	}{
		{line("/a/bin/haptic-cluster", "node", "--bin-dir=/a/bin", "--netns=x"), false},
		{line("/a/bin/haptic-cluster", "node", "--bin-dir=/a/bin/", "--netns=x"), false},
		{line("/b/bin/haptic-cluster", "node", "--bin-dir=/b/bin"), true},
		{line("/a/bin/haptic-cluster", "node"), false},
	} {
		if got := otherBinDir(c.cmdline, "/a/bin"); got != c.want {
			t.Errorf("otherBinDir(%q) = %v, want %v", c.cmdline, got, c.want)
		}
	}
}
