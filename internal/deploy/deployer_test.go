package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// fakeAgent records applies; it stands in for haptic-agent in these unit tests of the
// deployer alone (the agent has its own tests against real HAProxy).
type fakeAgent struct {
	srv     *httptest.Server
	mu      sync.Mutex
	applied []string
	fail    int
}

func newFakeAgent(t *testing.T) *fakeAgent {
	a := &fakeAgent{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "u" || p != "p" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodGet { // knows nothing to adopt: whole-set applies
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req struct{ Hash string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.fail > 0 {
			a.fail--
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		a.applied = append(a.applied, req.Hash)
		_ = json.NewEncoder(w).Encode(agentapi.Result{Hash: req.Hash, Result: "applied", Reloaded: true})
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAgent) pod(name string) (Pod, int) {
	host, port, _ := net.SplitHostPort(a.srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return Pod{Name: name, IP: host}, p
}

func (a *fakeAgent) history() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.applied...)
}

func testBundle(i int) *bundle.Bundle {
	return bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(fmt.Sprintf("global\n# %d\n", i))}})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// Each fake agent listens on its own port, so each test deployer talks to one pod.
func TestEveryPodGetsTheDesiredBundleAndNewPodsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := newFakeAgent(t)
	pod, port := a.pod("haproxy-a")
	d := New(ctx, Options{Port: port, Username: "u", Password: "p", SyncTimeout: 5 * time.Second})
	want := testBundle(1)
	d.SetDesired(want)
	d.SetPods([]Pod{pod})
	waitFor(t, "first apply", func() bool { return last(a.history()) == want.Hash })
	// The agent records the PUT before its answer reaches the deployer.
	waitFor(t, "first apply recorded", func() bool { return d.Deployed()[pod.Name] == want.Hash })
	// A pod that appears later is brought to the current bundle without a new change.
	b := newFakeAgent(t)
	podB, portB := b.pod("haproxy-b")
	d2 := New(ctx, Options{Port: portB, Username: "u", Password: "p", SyncTimeout: 5 * time.Second})
	d2.SetDesired(want)
	d2.SetPods([]Pod{podB})
	waitFor(t, "late pod", func() bool { return last(b.history()) == want.Hash })
}

func TestReloadsArePacedAndLatestWins(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := newFakeAgent(t)
	pod, port := a.pod("haproxy-a")
	d := New(ctx, Options{Port: port, Username: "u", Password: "p", SyncTimeout: 5 * time.Second, MinInterval: 400 * time.Millisecond})
	d.SetPods([]Pod{pod})
	start := time.Now()
	var final *bundle.Bundle
	for i := range 100 {
		final = testBundle(i)
		d.SetDesired(final)
		time.Sleep(2 * time.Millisecond)
	}
	waitFor(t, "latest bundle", func() bool { return last(a.history()) == final.Hash })
	windows := int(time.Since(start)/(400*time.Millisecond)) + 1
	if n := len(a.history()); n > windows+2 {
		t.Fatalf("%d applies in %d pacing windows: a burst must give at most one reload per window", n, windows)
	}
}

func TestFailedApplyIsRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := newFakeAgent(t)
	a.fail = 1
	pod, port := a.pod("haproxy-a")
	var mu sync.Mutex
	var outcomes []Outcome
	d := New(ctx, Options{Port: port, Username: "u", Password: "p", SyncTimeout: 5 * time.Second,
		OnOutcome: func(o Outcome) { mu.Lock(); outcomes = append(outcomes, o); mu.Unlock() }})
	want := testBundle(7)
	d.SetDesired(want)
	d.SetPods([]Pod{pod})
	// The retry's outcome, not only its request: the agent records a request before
	// the deployer has its answer.
	waitFor(t, "retry", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(outcomes) >= 2 && outcomes[len(outcomes)-1].Err == nil
	})
	mu.Lock()
	defer mu.Unlock()
	if outcomes[0].Err == nil || outcomes[len(outcomes)-1].Hash != want.Hash || last(a.history()) != want.Hash {
		t.Fatalf("outcomes %+v, agent history %v", outcomes, a.history())
	}
}

func TestWrongCredentialsAreAnError(t *testing.T) {
	a := newFakeAgent(t)
	pod, port := a.pod("x")
	c := &agentapi.Client{BaseURL: "http://" + net.JoinHostPort(pod.IP, strconv.Itoa(port)), Username: "u", Password: "wrong"}
	_, err := c.Apply(context.Background(), testBundle(1))
	var se *agentapi.StatusError
	if err == nil || !asStatus(err, &se) || se.Code != http.StatusUnauthorized {
		t.Fatalf("got %v", err)
	}
	if len(a.history()) != 0 {
		t.Fatal("applied with wrong credentials")
	}
}

func asStatus(err error, target **agentapi.StatusError) bool {
	se, ok := err.(*agentapi.StatusError)
	if ok {
		*target = se
	}
	return ok
}

// TestFirstDeliveryDoesNotStartThePacingWindow: the change right after a pod's
// first delivery (a Gateway's first route after its initial deploy) reloads at
// once; the reload after it waits for minDeploymentInterval.
func TestFirstDeliveryDoesNotStartThePacingWindow(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := newFakeAgent(t)
	pod, port := a.pod("haproxy-a")
	const interval = 2 * time.Second
	d := New(ctx, Options{Port: port, Username: "u", Password: "p", SyncTimeout: 5 * time.Second, MinInterval: interval})
	d.SetPods([]Pod{pod})
	initial, first, second := testBundle(1), testBundle(2), testBundle(3)
	d.SetDesired(initial)
	waitFor(t, "initial deploy", func() bool { return last(a.history()) == initial.Hash })
	start := time.Now()
	d.SetDesired(first)
	waitFor(t, "the first change", func() bool { return last(a.history()) == first.Hash })
	if took := time.Since(start); took > interval/2 {
		t.Fatalf("the change after the initial deploy waited %v: the initial deploy must not start the pacing window", took)
	}
	start = time.Now()
	d.SetDesired(second)
	waitFor(t, "the second change", func() bool { return last(a.history()) == second.Hash })
	if took := time.Since(start); took < interval*3/4 {
		t.Fatalf("the reload after a paced reload took %v: reloads keep the %v pacing", took, interval)
	}
}
