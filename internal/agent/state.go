package agent

import (
	"context"
	"sync"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// statusRecorder holds what /v1/state reports besides the file set; it has its own
// lock so that state reads never wait for an apply.
type statusRecorder struct {
	mu         sync.Mutex
	ver        runtime.Version
	procs      runtime.ProcList
	lastApply  *agentapi.ApplyRecord
	lastReload *agentapi.ReloadRecord
	failed     int
	restarts   int
	serverDiv  int
	mapDiv     int
	lastVerify *agentapi.VerifyRecord
}

func (s *statusRecorder) countRestart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restarts++
}

func (s *statusRecorder) addDivergence(servers, maps int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serverDiv += servers
	s.mapDiv += maps
}

func (s *statusRecorder) recordVerify(r agentapi.VerifyRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mapDiv += r.MapDivergence
	s.serverDiv += r.ServerDivergence
	s.lastVerify = &r
}

func (s *statusRecorder) setVersion(v runtime.Version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ver = v
}

func (s *statusRecorder) version() runtime.Version {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ver
}

func (s *statusRecorder) setProcs(pl runtime.ProcList) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.procs = pl
}

func (s *statusRecorder) recordApply(r agentapi.ApplyRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastApply = &r
}

func (s *statusRecorder) recordReload(start time.Time, err error) {
	r := agentapi.ReloadRecord{At: start.UTC(), DurationMs: time.Since(start).Milliseconds(), Result: "ok"}
	if err != nil {
		r.Result, r.Error = "failed", err.Error()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed++
	}
	s.lastReload = &r
}

// State reports the agent's state. The process list is read live when the master
// answers quickly, else the last one seen is used; the hash and the tree hash are
// read together, with applies held off (the disk after the files a runtime apply
// left to be written soon are written).
func (a *Agent) State(ctx context.Context) agentapi.State {
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	if pl, err := a.showProc(qctx); err == nil {
		a.st.setProcs(pl)
	}
	cancel()
	s := &a.st
	s.mu.Lock()
	st := agentapi.State{
		HAProxyVersion: s.ver.Raw, Capabilities: runtime.CapabilitiesOf(s.ver),
		Reloads: s.procs.Master.Reloads, FailedReloads: s.failed, HAProxyRestarts: s.restarts,
		LastApply: s.lastApply, LastReload: s.lastReload,
		Workers:          []agentapi.Worker{},
		ServerDivergence: s.serverDiv, MapDivergence: s.mapDiv, LastVerify: s.lastVerify,
	}
	for _, w := range s.procs.Workers {
		st.Workers = append(st.Workers, agentapi.Worker{PID: w.PID, Reloads: w.Reloads, Uptime: w.Uptime})
	}
	s.mu.Unlock()

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.current != nil {
		st.Hash, st.Files = a.current.Hash, len(a.current.Files)
	}
	if err := a.writeUnwritten(); err != nil {
		st.TreeError = err.Error()
		return st
	}
	var m manifest
	if err := readJSON(a.opts.manifestPath(), &m); err != nil {
		st.TreeError = err.Error()
		return st
	}
	tree, err := readTree(a.opts.Layout, m)
	if err != nil {
		st.TreeError = err.Error()
		return st
	}
	st.TreeHash = tree.Hash
	return st
}
