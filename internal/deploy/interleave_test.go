package deploy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// TestInterleavedRuntimeAndReloadsDoNotDiverge is the fault suite's case 6 at the
// deployer's level: 200 changes to one pod, map and server changes (runtime
// operations) interleaved with changes only a reload applies, some waited for and
// some superseded at once. Afterwards the controller's view (the deployer's
// running hash), the files on disk (the agent's tree hash) and what the worker
// runs (the agent's runtime verification) agree: 0 divergence.
func TestInterleavedRuntimeAndReloadsDoNotDiverge(t *testing.T) {
	opts, host, port := startRealAgent(t)
	fePort := freeTCPPort(t)
	mapPath := opts.Layout.MapsDir + "/host.map"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	count := map[string]int{}
	d := New(ctx, Options{Port: port, Username: "u", Password: "p", SyncTimeout: 30 * time.Second, ReloadVerificationTimeout: 10 * time.Second,
		OnOutcome: func(o Outcome) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case o.Err != nil:
				count["error"]++
			case o.Mode == ModeReload || o.Reloaded:
				count["reload"]++
			default:
				count["runtime"]++
			}
		}})
	pod := Pod{Name: "haproxy-0", IP: host}
	step := func(i int) *bundle.Bundle {
		var extra, hosts strings.Builder
		// Every 10th change sets a directive only a reload applies.
		fmt.Fprintf(&extra, "backend be_b\n    timeout server %ds\n    server b1 127.0.0.1:%d weight %d\n", 5+i/10, 20000+i%7, 1+i%5)
		for h := range 1 + i%13 {
			fmt.Fprintf(&hosts, "h%d.test be_a\n", h)
		}
		fmt.Fprintf(&hosts, "b.test be_b\n")
		return bundle.New([]bundle.File{poolConfig(fePort, mapPath, extra.String()), {Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(hosts.String())}})
	}
	d.SetPods([]Pod{pod})
	var want *bundle.Bundle
	for i := range 200 {
		want = step(i)
		d.SetDesired(want)
		if i%3 == 0 { // every third change is waited for; the others may be superseded
			waitFor(t, fmt.Sprintf("change %d", i), func() bool { return d.Deployed()[pod.Name] == want.Hash })
		}
	}
	waitFor(t, "the last change", func() bool { return d.Deployed()[pod.Name] == want.Hash })

	client := &agentapi.Client{BaseURL: fmt.Sprintf("http://%s:%d", host, port), Username: "u", Password: "p"}
	st, err := client.VerifyState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	t.Logf("200 changes: %v; agent reloads %d, failed %d; verification %+v", count, st.Reloads, st.FailedReloads, st.LastVerify)
	mu.Unlock()
	if view := d.RunningHashes()[pod.Name]; view != st.Hash || st.TreeHash != st.Hash {
		t.Errorf("controller view %s, agent %s, disk %s: they differ", view, st.Hash, st.TreeHash)
	}
	if v := st.LastVerify; v == nil || v.MapDivergence != 0 || v.ServerDivergence != 0 || v.Error != "" || v.Maps == 0 || v.Servers == 0 {
		t.Errorf("runtime verification: %+v", v)
	}
	if st.ServerDivergence != 0 || st.MapDivergence != 0 || st.FailedReloads != 0 {
		t.Errorf("divergence on the way: servers %d, maps %d, failed reloads %d", st.ServerDivergence, st.MapDivergence, st.FailedReloads)
	}
	if count["error"] != 0 || count["runtime"] == 0 || count["reload"] == 0 {
		t.Errorf("outcomes %v: want runtime and reload applies and no error", count)
	}
}
