package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agent"
	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
	"github.com/haproxy-haptic/haptic/internal/plan"
	"github.com/haproxy-haptic/haptic/internal/validate/haproxycheck"
)

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// noSecrets fails when plan output shows certificate content.
func noSecrets(t *testing.T, what, out string) {
	t.Helper()
	if strings.Contains(out, "TOP-SECRET") || strings.Contains(out, "PRIVATE KEY") {
		t.Fatalf("%s shows certificate content:\n%s", what, out)
	}
}

// TestPlanFromDirs: plans between two `haptic render -o DIR` outputs equal the
// plans between the tests that rendered them, in both output formats, and never
// show certificate content; the dirs can be mixed with test states.
func TestPlanFromDirs(t *testing.T) {
	cfg := writeConfig(t, strings.Replace(planDirCfg, "%d", "8080", 1))
	dirs := map[string]string{}
	for _, test := range []string{"one", "two", "three"} {
		dirs[test] = filepath.Join(t.TempDir(), test)
		if code, out, errOut := runCLI(t, "render", "-f", cfg, "--test", test, "-o", dirs[test]); code != exitOK {
			t.Fatalf("render %s: exit %d\n%s%s", test, code, out, errOut)
		}
	}

	code, out, errOut := runCLI(t, "plan", "--from-dir", dirs["one"], "--to-dir", dirs["two"])
	if code != exitOK {
		t.Fatalf("one → two: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"reload-free on HAProxy 2.6.12: 2 runtime operations", `"op":"add-server"`, `"op":"add-map"`, "writes map:host.map"} {
		if !strings.Contains(out, want) {
			t.Errorf("one → two lacks %q:\n%s", want, out)
		}
	}
	if _, same, _ := runCLI(t, "plan", "-f", cfg, "--from", "one", "--to", "two"); same != out {
		t.Errorf("dirs and tests plan differently:\n%s\nvs\n%s", out, same)
	}
	// A dir against a test state, and a test state against a dir.
	if code, mixed, _ := runCLI(t, "plan", "-f", cfg, "--from-dir", dirs["one"], "--to", "two"); code != exitOK || mixed != out {
		t.Errorf("--from-dir with --to: exit %d\n%s", code, mixed)
	}
	if code, mixed, _ := runCLI(t, "plan", "-f", cfg, "--from", "one", "--to-dir", dirs["two"]); code != exitOK || mixed != out {
		t.Errorf("--from with --to-dir: exit %d\n%s", code, mixed)
	}
	if code, out, _ := runCLI(t, "plan", "--from-dir", dirs["two"], "--to-dir", dirs["two"]); code != exitOK || !strings.Contains(out, "no change reaches HAProxy") {
		t.Errorf("same dir: exit %d\n%s", code, out)
	}

	// The certificate rotates: whatever the plan does about it, it names the file
	// and never shows its content.
	code, out, errOut = runCLI(t, "plan", "--from-dir", dirs["two"], "--to-dir", dirs["three"])
	if code != exitOK && code != exitTestsFailed {
		t.Fatalf("two → three: exit %d\n%s%s", code, out, errOut)
	}
	noSecrets(t, "summary", out)
	if !strings.Contains(out, "site.pem") {
		t.Errorf("two → three does not name the certificate:\n%s", out)
	}
	if _, same, _ := runCLI(t, "plan", "-f", cfg, "--from", "two", "--to", "three"); same != out {
		t.Errorf("dirs and tests plan differently:\n%s\nvs\n%s", out, same)
	}
	for _, pair := range [][2]string{{"one", "two"}, {"two", "three"}, {"one", "three"}} {
		_, js, _ := runCLI(t, "plan", "--from-dir", dirs[pair[0]], "--to-dir", dirs[pair[1]], "-o", "json")
		noSecrets(t, "json "+pair[0]+" → "+pair[1], js)
		var parsed planOutput
		if err := json.Unmarshal([]byte(js), &parsed); err != nil || parsed.HAProxyVersion != "2.6.12" {
			t.Fatalf("json %v: %s", err, js)
		}
		if strings.Contains(js, `"content"`) {
			t.Errorf("json carries file contents:\n%s", js)
		}
	}

	// A directory that is not a rendered bundle.
	if code, _, errOut := runCLI(t, "plan", "--from-dir", t.TempDir(), "--to-dir", dirs["one"]); code != exitUsage || !strings.Contains(errOut, "haproxy.cfg") {
		t.Errorf("empty dir: exit %d %s", code, errOut)
	}
}

// TestPlanSourceUsageErrors: one running and one desired state, flags that belong
// together, or exit 2 with a message naming the problem.
func TestPlanSourceUsageErrors(t *testing.T) {
	cfg := writeConfig(t, planCfg)
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", cfg, "--from", "one", "--from-dir", dir, "--to", "two"}, "--from-dir"},
		{[]string{"--from-dir", dir, "--from-agent", "http://127.0.0.1:1", "--to-dir", dir}, "give one"},
		{[]string{"-f", cfg, "--from", "one", "--to", "two", "--to-dir", dir}, "--to-dir"},
		{[]string{"-f", cfg, "--from", "one", "--to", "two", "--credentials-file", dir}, "--credentials-file is for --from-agent"},
		{[]string{"-f", cfg, "--from", "one", "--to-file", cfg, "--to-dir", dir}, "--to-file"},
		{[]string{"--from-dir", dir}, "desired state"},
		{[]string{"--to-dir", dir}, "running state"},
		{[]string{"--from-agent", "ftp://127.0.0.1:1", "--to-dir", dir}, "base URL"},
		{[]string{"--from-agent", "http://u:p@127.0.0.1:1", "--to-dir", dir}, "--credentials-file"},
		{[]string{"-f", cfg, "--from", "one", "--to", "two", "--haproxy-version", "banana"}, "banana"},
	} {
		code, out, errOut := runCLI(t, append([]string{"plan"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("plan %s: exit %d, want 2 and %q\n%s%s", strings.Join(c.args, " "), code, c.want, out, errOut)
		}
	}
}

// startPlanAgent starts a haptic-agent with a real HAProxy on a temp layout.
func startPlanAgent(t *testing.T, l bundle.Layout, stateDir string) *httptest.Server {
	t.Helper()
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not installed: make test installs it (apt-get install -y haproxy)")
	}
	a, err := agent.New(agent.Options{
		Layout: l, StateDir: stateDir, ReloadVerificationTimeout: 10 * time.Second,
		Username: "controller", Password: "s3cret", StatusAddress: "127.0.0.1", StatusPort: freeLoopbackPort(t),
		StopTimeout: 3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		_ = a.Close()
		t.Fatalf("start agent: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// TestPlanFromAgent: plan --from-agent reads what a running haptic-agent (real
// HAProxy) runs, plans with that HAProxy's version unless --haproxy-version says
// otherwise, prints no certificate content, and needs the agent's credentials.
func TestPlanFromAgent(t *testing.T) {
	dir := t.TempDir()
	l := bundle.Layout{
		ConfigFile: filepath.Join(dir, "etc", "haproxy.cfg"), MapsDir: filepath.Join(dir, "etc", "maps"),
		SSLCertsDir: filepath.Join(dir, "etc", "ssl"), GeneralStorageDir: filepath.Join(dir, "etc", "general"),
	}
	cfg := writeConfig(t, strings.Replace(planDirCfg, "%d", fmt.Sprint(freeLoopbackPort(t)), 1)+dataplaneYAML(l))
	srv := startPlanAgent(t, l, filepath.Join(dir, "state"))
	client := &agentapi.Client{BaseURL: srv.URL, Username: "controller", Password: "s3cret"}
	ctx := context.Background()
	one := renderTest(t, cfg, "one")
	if res, err := client.Apply(ctx, one); err != nil || res.Result != agentapi.ResultApplied {
		t.Fatalf("apply one: %+v %v", res, err)
	}
	st, err := client.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Debian's HAProxy spells its version "2.6.12-1+deb12u4": plan output shows which
	// version it planned with.
	if _, err := runtime.ParseVersion(st.HAProxyVersion); err != nil {
		t.Fatalf("agent runs HAProxy %q: %v", st.HAProxyVersion, err)
	}
	// The client reads back exactly what was applied.
	got, version, err := client.Config(ctx)
	if err != nil || got.Hash != one.Hash || version != st.HAProxyVersion {
		t.Fatalf("client.Config: %v, hash %v want %s, version %q want %q", err, got, one.Hash, version, st.HAProxyVersion)
	}

	creds := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(creds, []byte("controller:s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "plan", "-f", cfg, "--from-agent", srv.URL+"/", "--credentials-file", creds, "--to", "two")
	if code != exitOK {
		t.Fatalf("agent → two: exit %d\n%s%s", code, out, errOut)
	}
	noSecrets(t, "agent → two", out)
	// Planned with the agent's version: the same plan as from the test it runs.
	if _, want, _ := runCLI(t, "plan", "-f", cfg, "--from", "one", "--to", "two", "--haproxy-version", st.HAProxyVersion); out != want {
		t.Errorf("agent plan:\n%s\nwant:\n%s", out, want)
	}
	if !strings.HasPrefix(out, "reload-free on HAProxy "+st.HAProxyVersion+": 2 runtime operations\n") {
		t.Errorf("agent plan does not use the agent's version %q:\n%s", st.HAProxyVersion, out)
	}
	// An explicit version wins.
	code, out, _ = runCLI(t, "plan", "-f", cfg, "--from-agent", srv.URL, "--credentials-file", creds, "--to", "two", "--haproxy-version", "3.4.0")
	if code != exitOK || !strings.HasPrefix(out, "reload-free on HAProxy 3.4.0:") {
		t.Errorf("--haproxy-version 3.4.0: exit %d\n%s", code, out)
	}
	// The certificate rotation against what runs: names only.
	code, out, _ = runCLI(t, "plan", "-f", cfg, "--from-agent", srv.URL, "--credentials-file", creds, "--to", "three", "-o", "json")
	noSecrets(t, "agent → three (json)", out)
	if code != exitOK && code != exitTestsFailed {
		t.Errorf("agent → three: exit %d\n%s", code, out)
	}

	// Credentials from the environment; wrong ones are refused.
	t.Setenv("HAPTIC_AGENT_USERNAME", "controller")
	t.Setenv("HAPTIC_AGENT_PASSWORD", "s3cret")
	if code, out, errOut := runCLI(t, "plan", "--from-agent", srv.URL, "--to-dir", writeBundleDir(t, one)); code != exitOK || !strings.Contains(out, "no change reaches HAProxy") {
		t.Errorf("env credentials, agent → its own set: exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv("HAPTIC_AGENT_PASSWORD", "wrong")
	if code, out, errOut := runCLI(t, "plan", "-f", cfg, "--from-agent", srv.URL, "--to", "two"); code != exitUsage || !strings.Contains(errOut, "401") || out != "" {
		t.Errorf("wrong credentials: exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv("HAPTIC_AGENT_PASSWORD", "")
	if code, _, errOut := runCLI(t, "plan", "-f", cfg, "--from-agent", srv.URL, "--to", "two"); code != exitUsage || !strings.Contains(errOut, "credentials") {
		t.Errorf("no credentials: exit %d\n%s", code, errOut)
	}
}

// writeBundleDir lays a bundle out as `haptic render -o DIR` does (default paths).
func writeBundleDir(t *testing.T, b *bundle.Bundle) string {
	t.Helper()
	dir := t.TempDir()
	target := haproxycheck.DefaultLayout.Rebase(dir)
	if err := b.WriteTo(target); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sslOp stands for an operation that carries a certificate and its key.
type sslOp struct {
	Path  string `json:"path"`
	PEM   string `json:"pem"`
	Other string `json:"other,omitempty"`
}

func (*sslOp) Kind() string    { return "set-ssl-cert" }
func (*sslOp) Validate() error { return nil }
func (*sslOp) Run(context.Context, runtime.Execer, runtime.MapPath) error {
	return nil
}

// TestPlanOutputRedactsCertificates: operations print their names and paths, not
// certificate content, in both output formats; map operations print as they are.
func TestPlanOutputRedactsCertificates(t *testing.T) {
	const key = "-----BEGIN PRIVATE KEY-----\nTOP-SECRET\n-----END PRIVATE KEY-----\n"
	ops := []runtime.Op{
		{Operation: &sslOp{Path: "/etc/haproxy/ssl/site.pem", PEM: key}},
		{Operation: &sslOp{Path: "/etc/haproxy/ssl/b.pem", PEM: "not pem", Other: key}},
		{Operation: &runtime.AddMap{Map: "host.map", Key: "a.test", Value: "be_a"}},
	}
	want := []string{
		fmt.Sprintf(`{"op":"set-ssl-cert","path":"/etc/haproxy/ssl/site.pem","pem":"(%d bytes, not shown)"}`, len(key)),
		fmt.Sprintf(`{"op":"set-ssl-cert","path":"/etc/haproxy/ssl/b.pem","pem":"(7 bytes, not shown)","other":"(%d bytes, not shown)"}`, len(key)),
		`{"op":"add-map","map":"host.map","key":"a.test","value":"be_a"}`,
	}
	for i, op := range ops {
		if got := string(redactedOp(op)); got != want[i] {
			t.Errorf("op %d: %s, want %s", i, got, want[i])
		}
	}
	res := plan.Result{Ops: ops, Files: []bundle.File{{Kind: bundle.KindCert, Name: "site.pem", Content: bundle.TextOf(key), Hash: bundle.HashContent(key)}}}
	caps, _ := plan.CapabilitiesFor("2.6.12")
	var summary strings.Builder
	writePlan(&summary, res, caps)
	noSecrets(t, "summary", summary.String())
	if !strings.Contains(summary.String(), "site.pem") || !strings.Contains(summary.String(), "writes cert:site.pem") {
		t.Errorf("summary does not name the certificate:\n%s", summary.String())
	}
	js, err := json.Marshal(planJSON(res, caps))
	if err != nil {
		t.Fatal(err)
	}
	noSecrets(t, "json", string(js))
	if !strings.Contains(string(js), `"name":"site.pem"`) {
		t.Errorf("json does not name the certificate: %s", js)
	}
}
