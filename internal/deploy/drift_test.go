package deploy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// driftAgent accepts applies and answers state requests with what is on its "disk".
type driftAgent struct {
	mu              sync.Mutex
	hash, treeHash  string
	verify          *agentapi.VerifyRecord
	applies, states int
	// onState runs (with mu held) before a state request is answered.
	onState func()
}

func (a *driftAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch r.Method + " " + r.URL.Path {
	case "PUT /v1/config":
		var req struct{ Hash string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		a.hash, a.treeHash = req.Hash, req.Hash
		a.applies++
		_ = json.NewEncoder(w).Encode(agentapi.Result{Hash: req.Hash, Result: agentapi.ResultApplied, Reloaded: true})
	case "GET /v1/state":
		if a.onState != nil {
			a.onState()
		}
		a.states++
		_ = json.NewEncoder(w).Encode(agentapi.State{Hash: a.hash, TreeHash: a.treeHash, LastVerify: a.verify})
	default:
		http.NotFound(w, r)
	}
}

func TestCheckDriftReappliesADriftedPod(t *testing.T) {
	a := &driftAgent{}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	fa := &fakeAgent{srv: srv}
	pod, port := fa.pod("haproxy-0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := New(ctx, Options{Port: port, Username: "u", Password: "p", SyncTimeout: 5 * time.Second})
	b := testBundle(1)
	d.SetPods([]Pod{pod})
	d.SetDesired(b)
	waitFor(t, "the first apply", func() bool { return d.RunningHashes()[pod.Name] == b.Hash })

	var checks []DriftCheck
	collect := func(c DriftCheck) { checks = append(checks, c) }
	d.CheckDrift(ctx, collect)
	if len(checks) != 1 || checks[0].Drifted || checks[0].Verify != (Divergence{}) {
		t.Fatalf("an unchanged pod: %+v", checks)
	}

	// Someone edits the files on the pod; the verification found two maps off.
	a.mu.Lock()
	a.treeHash = "edited"
	a.verify = &agentapi.VerifyRecord{Maps: 3, MapDivergence: 2}
	a.mu.Unlock()
	checks = nil
	d.CheckDrift(ctx, collect)
	if len(checks) != 1 || !checks[0].Drifted || checks[0].Verify != (Divergence{Maps: 2}) {
		t.Fatalf("a drifted pod: %+v", checks)
	}
	waitFor(t, "the re-apply", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.applies == 2 && a.treeHash == b.Hash
	})

	// Applies land while the pod is read: a set the pod accepted during the read
	// is not a drift; one it ran before the read (an agent restarted on older
	// files) is.
	b2, b3, b4 := testBundle(2), testBundle(3), testBundle(4)
	deliver := func(next *bundle.Bundle) {
		d.SetDesired(next)
		waitFor(t, "an apply", func() bool { return d.RunningHashes()[pod.Name] == next.Hash })
	}
	deliver(b2)
	a.mu.Lock()
	a.verify = nil
	a.onState = func() { // b3 and b4 land while the pod answers with b3
		a.onState = nil
		a.mu.Unlock()
		deliver(b3)
		deliver(b4)
		a.mu.Lock()
		a.hash, a.treeHash = b3.Hash, b3.Hash
	}
	a.mu.Unlock()
	checks = nil
	d.CheckDrift(ctx, collect)
	if len(checks) != 1 || checks[0].Drifted {
		t.Fatalf("a pod read while it accepted the next set: %+v", checks)
	}
	a.mu.Lock()
	a.hash, a.treeHash = b2.Hash, b2.Hash
	a.mu.Unlock()
	checks = nil
	d.CheckDrift(ctx, collect)
	if len(checks) != 1 || !checks[0].Drifted {
		t.Fatalf("a pod back on a set it ran before the read: %+v", checks)
	}
}

func TestDivergenceCountsDeploymentsAndMaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  Divergence
		want Divergence
	}{
		{"a clean runtime apply", Outcome{Mode: ModeRuntime}.Divergence(), Divergence{}},
		{"servers and maps off", Outcome{ServerDivergence: 3, MapDivergence: 2}.Divergence(), Divergence{Deployments: 1, Maps: 2}},
		{"no verification", stateDivergence(agentapi.State{}), Divergence{}},
		{"maps off", stateDivergence(agentapi.State{LastVerify: &agentapi.VerifyRecord{Maps: 4, MapDivergence: 2}}), Divergence{Maps: 2}},
		{"servers off", stateDivergence(agentapi.State{LastVerify: &agentapi.VerifyRecord{Servers: 9, ServerDivergence: 2}}), Divergence{Deployments: 1}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
}
