package node

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestImageName(t *testing.T) {
	cases := map[string]string{
		"gcr.io/k8s-staging-gateway-api/echo-basic:v20231214-v1.0.0-140-gf544a46e": "echo-basic",
		"registry.k8s.io/gateway-api/echo-basic@sha256:abc":                        "echo-basic",
		"echo-basic":                           "echo-basic",
		"localhost:5000/haproxy:2.6":           "haproxy",
		"docker.io/library/busybox:1.36":       "busybox",
		"registry.k8s.io/coredns/coredns:v1.1": "coredns",
		"ghcr.io/haproxy-haptic/haptic:dev":    "haptic",
	}
	for image, want := range cases {
		if got := ImageName(image); got != want {
			t.Errorf("ImageName(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestResolveArgv(t *testing.T) {
	cache, bin := t.TempDir(), t.TempDir()
	echo := filepath.Join(cache, EchoBasicBinary)
	if err := os.WriteFile(echo, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := Dirs{Cache: cache, Bin: bin}
	tests := []struct {
		name          string
		image         string
		command, args []string
		want          []string
		wantReason    string
	}{
		{name: "entrypoint", image: "x.io/echo-basic:v1", args: []string{"-v"}, want: []string{echo, "-v"}},
		{name: "command naming the binary", image: "echo-basic", command: []string{"/echo-basic"}, want: []string{echo}},
		{name: "other command", image: "echo-basic", command: []string{"sh", "-c", "true"}, want: []string{"sh", "-c", "true"}},
		{name: "host image", image: "busybox:1", command: []string{"sleep"}, args: []string{"5"}, want: []string{"sleep", "5"}},
		{name: "host image without command", image: "busybox", wantReason: "NoCommand"},
		{name: "unmapped", image: "nginx:1.27", wantReason: "ImageNotMapped"},
		{name: "not built", image: "haproxy:2.6", wantReason: "BinaryNotBuilt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveArgv(dirs, tc.image, tc.command, tc.args)
			if tc.wantReason != "" {
				var w *waitingError
				if !errors.As(err, &w) || w.Reason != tc.wantReason {
					t.Fatalf("err = %v, want reason %s", err, tc.wantReason)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestImageTableFiles(t *testing.T) {
	cache, bin, tables := t.TempDir(), t.TempDir(), t.TempDir()
	echo := filepath.Join(cache, "echo-basic") // a table program, not the built-in entry
	if err := os.WriteFile(echo, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(file, []byte(`images:
  hyper-server:
    command: ["{cache}/echo-basic", "--quiet"]
    env: {HTTP_PORT: "8080", H2C_PORT: "3001"}
  nginx:
    command: []
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file in the directory overrides the built-in haproxy entry.
	if err := os.WriteFile(filepath.Join(tables, "10-haproxy.json"), []byte(`{"images":{"haproxy":{"command":["/bin/true"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := Dirs{Cache: cache, Bin: bin, ImageTables: []string{file}, ImageTableDir: tables}

	argv, env, err := ResolveImage(dirs, "docker.io/howardjohn/hyper-server:latest", nil, []string{"-v"}, []string{"HTTP_PORT=9090"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(argv, []string{echo, "--quiet", "-v"}) {
		t.Errorf("argv %v", argv)
	}
	if !slices.Equal(env, []string{"H2C_PORT=3001"}) { // the container's own HTTP_PORT wins
		t.Errorf("env %v", env)
	}
	if argv, _, err := ResolveImage(dirs, "hyper-server", []string{"/usr/local/bin/echo-basic"}, nil, nil); err != nil || argv[0] != echo {
		t.Errorf("a command naming the mapped program runs it: %v %v", argv, err)
	}
	if argv, _, err := ResolveImage(dirs, "nginx:1.27", []string{"sleep"}, []string{"1"}, nil); err != nil || !slices.Equal(argv, []string{"sleep", "1"}) {
		t.Errorf("a host image runs its command: %v %v", argv, err)
	}
	if argv, _, err := ResolveImage(dirs, "haproxy:2.6", nil, nil, nil); err != nil || !slices.Equal(argv, []string{"/bin/true"}) {
		t.Errorf("the directory's entry overrides the built-in one: %v %v", argv, err)
	}
	builtin := filepath.Join(cache, EchoBasicBinary)
	if err := os.WriteFile(builtin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if argv, _, err := ResolveImage(dirs, "echo-basic", nil, nil, nil); err != nil || argv[0] != builtin {
		t.Errorf("built-in images still resolve: %v %v", argv, err)
	}
	var we *waitingError
	if _, _, err := ResolveImage(dirs, "nginx", nil, nil, nil); !errors.As(err, &we) || we.Reason != "NoCommand" {
		t.Errorf("host image without command: %v", err)
	}
	if err := os.WriteFile(filepath.Join(tables, "20-bad.yaml"), []byte("images:\n  reg.io/x:1: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ResolveImage(dirs, "echo-basic", nil, nil, nil); !errors.As(err, &we) || we.Reason != "ImageTableInvalid" {
		t.Errorf("an invalid table must surface as a waiting reason: %v", err)
	}
}
