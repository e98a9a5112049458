package agentapi

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCredentials(t *testing.T) {
	p := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(p, []byte("admin:pa:ss\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	none := func(string) string { return "" }
	if u, pw, err := Credentials(p, none); err != nil || u != "admin" || pw != "pa:ss" {
		t.Fatalf("file: %q %q %v", u, pw, err)
	}
	env := map[string]string{"HAPTIC_AGENT_USERNAME": "u", "HAPTIC_AGENT_PASSWORD": "p"}
	if u, pw, err := Credentials("", func(k string) string { return env[k] }); err != nil || u != "u" || pw != "p" {
		t.Fatalf("env: %q %q %v", u, pw, err)
	}
	if _, _, err := Credentials("", none); !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("none: %v", err)
	}
	if err := os.WriteFile(p, []byte("no-colon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Credentials(p, none); err == nil {
		t.Fatal("a line without ':' must fail")
	}
}
