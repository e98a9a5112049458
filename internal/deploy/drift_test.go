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

	// Applies land while the pod is read: a set the pod accepted before the
	// latest is not a drift; a set this deployer never delivered is.
	b2, b3 := testBundle(2), testBundle(3)
	for _, next := range []*bundle.Bundle{b2, b3} {
		d.SetDesired(next)
		waitFor(t, "an apply", func() bool { return d.RunningHashes()[pod.Name] == next.Hash })
	}
	for _, tc := range []struct {
		hash    string
		drifted bool
	}{{b2.Hash, false}, {b.Hash, false}, {testBundle(4).Hash, true}} {
		a.mu.Lock()
		a.hash, a.treeHash, a.verify = tc.hash, tc.hash, nil
		a.mu.Unlock()
		checks = nil
		d.CheckDrift(ctx, collect)
		if len(checks) != 1 || checks[0].Drifted != tc.drifted {
			t.Fatalf("a pod read at %s: %+v, want drifted %v", tc.hash[:12], checks, tc.drifted)
		}
		if tc.drifted {
			break
		}
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
