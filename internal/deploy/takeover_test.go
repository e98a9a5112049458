package deploy

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// poolConfig routes by Host through host.map to be_a and the backends in extra,
// with two spare pool backends for routes added at runtime.
func poolConfig(port int, mapPath, extra string) bundle.File {
	return bundle.File{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(fmt.Sprintf(`global
    hard-stop-after 5s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:%d
    use_backend %%[req.hdr(host),lower,map(%s)]
backend be_a
    server a1 127.0.0.1:9 
backend haptic_pool_000
backend haptic_pool_001
%s`, port, mapPath, extra))}
}

// TestNewDeployerAdoptsWhatRuns: a deployer that has no record of a pod (a new
// leader after a controller restart) reads what the pod runs — its files and the
// pool aliases the previous deployer's runtime operations made — and plans from
// it: a runtime-applicable change is delivered with 0 reloads, and an unchanged
// one with no request at all.
func TestNewDeployerAdoptsWhatRuns(t *testing.T) {
	opts, host, port := startRealAgent(t)
	fePort := freeTCPPort(t)
	mapPath := opts.Layout.MapsDir + "/host.map"
	withC := "backend be_c\n    server c1 127.0.0.1:10\n"
	withD := withC + "backend be_d\n    server d1 127.0.0.1:11\n"
	desired := func(extra, hostMap string) *bundle.Bundle {
		return bundle.New([]bundle.File{poolConfig(fePort, mapPath, extra), {Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(hostMap)}})
	}
	pod := Pod{Name: "haproxy-0", IP: host}
	client := &agentapi.Client{BaseURL: fmt.Sprintf("http://%s:%d", host, port), Username: "u", Password: "p"}
	reloads := func() int {
		t.Helper()
		st, err := client.State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return st.Reloads
	}
	deployer := func(ctx context.Context) (*Deployer, func(string) Outcome) {
		onOutcome, next := outcomes(t)
		d := New(ctx, Options{Port: port, Username: "u", Password: "p", SyncTimeout: 20 * time.Second,
			ReloadVerificationTimeout: 10 * time.Second, OnOutcome: onOutcome})
		return d, next
	}

	// The first leader: a whole-set apply, then be_c at runtime in a pool backend.
	ctx1, stop1 := context.WithCancel(context.Background())
	d1, next1 := deployer(ctx1)
	d1.SetDesired(desired("", "a.test be_a\n"))
	d1.SetPods([]Pod{pod})
	if o := next1("first apply"); o.Mode != ModeReload {
		t.Fatalf("first apply: mode %s", o.Mode)
	}
	d1.SetDesired(desired(withC, "a.test be_a\nc.test be_c\n"))
	if o := next1("be_c"); o.Mode != ModeRuntime || o.Reloaded {
		t.Fatalf("be_c: %+v", o)
	}
	stop1()
	before := reloads()
	running, err := client.Running(context.Background())
	if err != nil || running.Aliases["be_c"] != "haptic_pool_000" {
		t.Fatalf("the agent keeps the aliases of its set: %v %v", running.Aliases, err)
	}

	// A new leader with the same desired state: nothing is sent.
	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	d2, next2 := deployer(ctx2)
	d2.SetDesired(desired(withC, "a.test be_a\nc.test be_c\n"))
	d2.SetPods([]Pod{pod})
	if o := next2("same state"); o.Mode != ModeRuntime || o.Ops != 0 || o.Reloaded {
		t.Fatalf("same state after the takeover: %+v", o)
	}
	// ... and with a new route: runtime operations in the second pool backend.
	d2.SetDesired(desired(withD, "a.test be_a\nc.test be_c\nd.test be_d\n"))
	if o := next2("be_d"); o.Mode != ModeRuntime || o.Reloaded || o.Ops == 0 {
		t.Fatalf("be_d after the takeover: %+v", o)
	}
	if after := reloads(); after != before {
		t.Fatalf("the takeover cost %d reloads", after-before)
	}
	running, err = client.Running(context.Background())
	if err != nil || running.Aliases["be_c"] != "haptic_pool_000" || running.Aliases["be_d"] != "haptic_pool_001" {
		t.Fatalf("aliases after be_d: %v %v", running.Aliases, err)
	}

	// A third leader arrives with a change no runtime operation can make: it reloads.
	stop2()
	d3, next3 := deployer(context.Background())
	d3.SetDesired(desired(withD+"    option forwardfor\n", "a.test be_a\nc.test be_c\nd.test be_d\n"))
	d3.SetPods([]Pod{pod})
	if o := next3("forwardfor"); o.Mode != ModeReload || len(o.Reasons) == 0 {
		t.Fatalf("a reload-only change after the takeover: %+v", o)
	}
}
