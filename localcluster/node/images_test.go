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
	echo := filepath.Join(cache, "echo-basic")
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
