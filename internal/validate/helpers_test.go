package validate

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/golden"
)

// requireHAProxy fails (rather than skips) without HAProxy: these tests exist to run
// the real binary, and `make test` installs it.
func requireHAProxy(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not on PATH: apt-get install -y haproxy")
	}
}

const validCfg = `global
    log stdout format raw local0

defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 5s

frontend fe
    bind 127.0.0.1:8080
    use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map,be_default)]
    default_backend be_default

backend be_default
    server s1 127.0.0.1:8081

backend be_app
    server s1 127.0.0.1:8082
`

var hostMap = bundle.File{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("example.com be_app\n")}

// sampleBundle is a valid bundle with a map and a YAML general file.
func sampleBundle() *bundle.Bundle {
	return bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(validCfg)},
		{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("example.com be_app\nexample.org be_app\n")},
		{Kind: bundle.KindFile, Name: "values.yaml", Content: bundle.TextOf("app:\n  replicas: 3\n  hosts: [a.example, b.example]\n")},
	})
}

// assertGolden compares got with testdata/<name>, rewriting it with -update.
func assertGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Assert(t, filepath.Join("testdata", name), []byte(got))
}
