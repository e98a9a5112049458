package bench

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestScanArtifactsFindsAndRedacts(t *testing.T) {
	dir := t.TempDir()
	secret := []byte("s3cr3t-agent-password")
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("logs/controller.log", "connecting with password s3cr3t-agent-password\n")
	write("cluster/dump.yaml", "data:\n  password: "+base64.StdEncoding.EncodeToString(secret)+"\n")
	write("probe/samples.json", `[{"latency_ms": 12}]`)
	write("runner-summary.json", "s3cr3t-agent-password") // skipped: written after the scan
	values := []SecretValue{{Namespace: "ns", Name: "creds", Key: "password", Value: secret},
		{Namespace: "ns", Name: "creds", Key: "username", Value: []byte("haptic")}} // too short to scan
	rep := ScanArtifacts(dir, 1, values, "runner-summary.json")
	if rep.Pass || len(rep.Matches) != 2 || rep.ValuesScanned != 1 || rep.FilesScanned != 3 || !rep.Redacted {
		t.Fatalf("report %+v", rep)
	}
	forms := map[string]string{}
	for _, m := range rep.Matches {
		forms[m.File] = m.Form
		if m.Secret != "ns/creds" || m.Key != "password" {
			t.Errorf("match %+v", m)
		}
	}
	if forms["logs/controller.log"] != "raw" || forms["cluster/dump.yaml"] != "base64" {
		t.Errorf("forms %v", forms)
	}
	for _, f := range []string{"logs/controller.log", "cluster/dump.yaml"} {
		data, _ := os.ReadFile(filepath.Join(dir, f))
		if strings.Contains(string(data), string(secret)) || !strings.Contains(string(data), Redacted) {
			t.Errorf("%s not redacted: %s", f, data)
		}
	}
	if again := ScanArtifacts(dir, 1, values, "runner-summary.json"); !again.Pass {
		t.Errorf("a redacted tree still matches: %+v", again)
	}
}

func TestSummariseVerdicts(t *testing.T) {
	ok := SecretScanReport{Pass: true}
	now := time.Now()
	neg := Summarise([]ScenarioResult{{Name: "probe", MeasuredPass: false}, {Name: "routechange", MeasuredPass: true}}, nil, ok, now, now)
	if neg.MeasuredResult.Pass || !neg.Harness.Pass || neg.Harness.FinalExitCode != 0 || len(neg.MeasuredResult.NegativeScenarios) != 1 {
		t.Errorf("a negative measurement must keep exit 0: %+v", neg)
	}
	broken := Summarise([]ScenarioResult{{Name: "scale", MeasuredPass: true, HarnessError: "timeout"}}, nil, ok, now, now)
	if broken.Harness.Pass || broken.Harness.FinalExitCode != 1 {
		t.Errorf("a harness error must fail the run: %+v", broken)
	}
	leaked := Summarise([]ScenarioResult{{Name: "probe", MeasuredPass: true}}, nil, SecretScanReport{Matches: []SecretMatch{{}}}, now, now)
	if leaked.Harness.Pass || leaked.Harness.FinalExitCode != 1 {
		t.Errorf("a secret match must fail the run: %+v", leaked)
	}
	if empty := Summarise(nil, []string{"install: x"}, ok, now, now); empty.MeasuredResult.Pass || empty.Harness.Pass {
		t.Errorf("no scenarios: %+v", empty)
	}
}
