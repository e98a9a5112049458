package agentapi

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/golden"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// TestWireFormat pins the JSON of every message: the agent and controllers of other
// versions read it, so a renamed field or tag is a protocol change, not a refactor.
func TestWireFormat(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	files := []bundle.File{{Name: "haproxy.cfg", Kind: bundle.KindConfig, Content: bundle.TextOf("global\n")}}
	messages := map[string]any{
		"config-request":         ConfigRequest{Hash: "h1", Files: files},
		"config-request-timeout": ConfigRequest{Hash: "h1", Files: files, ReloadVerificationTimeoutMs: 5000},
		"current-config":         CurrentConfig{ConfigRequest: ConfigRequest{Hash: "h1", Files: files}, HAProxyVersion: "2.6.12"},
		"current-config-aliases": CurrentConfig{ConfigRequest: ConfigRequest{Hash: "h1", Files: files}, HAProxyVersion: "2.6.12",
			Aliases: map[string]string{"be_new": "pool_1"}},
		"runtime-request": RuntimeRequest{BaseHash: "h0", Hash: "h1", Files: files, Operations: []runtime.Op{
			{Operation: &runtime.SetMap{Map: "host.map", Key: "a.test", Value: "be_a"}},
			{Operation: &runtime.SetServerWeight{Backend: "be", Server: "s1", Weight: 3}},
		}},
		"runtime-request-add-server": RuntimeRequest{BaseHash: "h0", Hash: "h1", Files: files, Operations: []runtime.Op{
			{Operation: &runtime.AddServer{Backend: "be", Server: "s2", Address: "10.0.0.2", Port: 8443, Check: true,
				Options: []string{"ssl", "verify", "required", "ca-file", "/etc/haproxy/ssl/ca.pem", "sni", "str(a.test)"}}},
		}},
		"runtime-request-aliases": RuntimeRequest{BaseHash: "h0", Hash: "h1", Files: files, Operations: []runtime.Op{},
			Aliases: map[string]string{"be_new": "pool_1"}, ReloadVerificationTimeoutMs: 5000},
		"runtime-request-edits": RuntimeRequest{BaseHash: "h0", Hash: "h1", Operations: []runtime.Op{
			{Operation: &runtime.AddMap{Map: "host.map", Key: "b.test", Value: "be_b"}},
		}, Edits: []FileEdit{{Kind: bundle.KindMap, Name: "host.map", BaseHash: "m0", Hash: "m1",
			Splices: []Splice{{Offset: 12, Insert: "b.test be_b\n"}, {Offset: 40, Delete: 12}}}}},
		"result": Result{Hash: "h1", Result: ResultRuntimeFallback, Reloaded: true, ReloadID: 7, DurationMs: 12,
			Error: "e", Alerts: []string{"a"}, ServerDivergence: 1, MapDivergence: 2},
		"state": State{
			Hash: "h1", Files: 3, HAProxyVersion: "2.6.12", Capabilities: runtime.Capabilities{RuntimeMaps: true, DynamicServers: true, SSLRuntime: true},
			Reloads: 4, FailedReloads: 1,
			LastApply:  &ApplyRecord{At: at, Hash: "h1", Result: ResultApplied, Mode: "runtime"},
			LastReload: &ReloadRecord{At: at, DurationMs: 30, Result: "ok"},
			Workers:    []Worker{{PID: 42, Reloads: 4, Uptime: "0d00h01m02s"}},
			TreeHash:   "h1", ServerDivergence: 1, MapDivergence: 2,
			LastVerify: &VerifyRecord{At: at, DurationMs: 5, Maps: 2, MapDivergence: 1, Servers: 9, ServerDivergence: 1,
				Divergences: []string{"map host.map: 1 missing"}, Corrected: "reload"},
		},
	}
	for name, msg := range messages {
		golden.AssertJSON(t, filepath.Join("testdata", name+".json"), msg)
	}
}
