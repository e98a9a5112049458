package agent

import (
	"context"
	"sync"
	"time"

	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// State is the answer of GET /v1/state.
type State struct {
	// Hash is the current file set's hash (what the agent applied and runs).
	Hash           string               `json:"hash"`
	Files          int                  `json:"files"`
	HAProxyVersion string               `json:"haproxyVersion"`
	Capabilities   runtime.Capabilities `json:"capabilities"`
	// Reloads is the master's reload counter (`show proc`): reloads since HAProxy
	// started, failed ones included. FailedReloads counts the reloads this agent saw
	// fail verification since it started (the master's own "[failed: N]" counter
	// resets at the next successful reload).
	Reloads       int           `json:"reloads"`
	FailedReloads int           `json:"failedReloads"`
	LastApply     *ApplyRecord  `json:"lastApply,omitempty"`
	LastReload    *ReloadRecord `json:"lastReload,omitempty"`
	Workers       []Worker      `json:"workers"`
	// TreeHash is the hash of the current set's files as they are on disk now;
	// it differs from Hash when someone changed them (drift).
	TreeHash  string `json:"treeHash"`
	TreeError string `json:"treeError,omitempty"`
	// ServerDivergence and MapDivergence count, since the agent started, the servers
	// and maps found running differently from the files: by the read-back after
	// runtime operations and (maps) by runtime verifications. Each was corrected.
	ServerDivergence int `json:"serverDivergence"`
	MapDivergence    int `json:"mapDivergence"`
	// LastVerify is the last runtime verification (GET /v1/state?verify=runtime or
	// the agent's --verify-interval).
	LastVerify *VerifyRecord `json:"lastVerify,omitempty"`
}

// ApplyRecord describes the last apply.
type ApplyRecord struct {
	At     time.Time `json:"at"`
	Hash   string    `json:"hash"`
	Result string    `json:"result"`
	Error  string    `json:"error,omitempty"`
	Mode   string    `json:"mode"` // reload or runtime
}

// ReloadRecord describes the last reload.
type ReloadRecord struct {
	At         time.Time `json:"at"`
	DurationMs int64     `json:"durationMs"`
	Result     string    `json:"result"` // ok or failed
	Error      string    `json:"error,omitempty"`
}

// Worker is one HAProxy worker process.
type Worker struct {
	PID     int    `json:"pid"`
	Reloads int    `json:"reloads"`
	Uptime  string `json:"uptime"`
}

// statusRecorder holds what /v1/state reports besides the file set; it has its own
// lock so that state reads never wait for an apply.
type statusRecorder struct {
	mu         sync.Mutex
	ver        runtime.Version
	procs      runtime.ProcList
	lastApply  *ApplyRecord
	lastReload *ReloadRecord
	failed     int
	hash       string
	files      int
	serverDiv  int
	mapDiv     int
	lastVerify *VerifyRecord
}

func (s *statusRecorder) addDivergence(servers, maps int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serverDiv += servers
	s.mapDiv += maps
}

func (s *statusRecorder) recordVerify(r VerifyRecord) {
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

func (s *statusRecorder) recordApply(r ApplyRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastApply = &r
}

func (s *statusRecorder) recordReload(start time.Time, err error) {
	r := ReloadRecord{At: start.UTC(), DurationMs: time.Since(start).Milliseconds(), Result: "ok"}
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

func (s *statusRecorder) setCurrent(hash string, files int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hash, s.files = hash, files
}

// State reports the agent's state. The process list is read live when the master
// answers quickly, else the last one seen is used; the tree hash is recomputed from
// disk.
func (a *Agent) State(ctx context.Context) State {
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	if pl, err := a.showProc(qctx); err == nil {
		a.st.setProcs(pl)
	}
	cancel()
	s := &a.st
	s.mu.Lock()
	st := State{
		Hash: s.hash, Files: s.files,
		HAProxyVersion: s.ver.Raw, Capabilities: runtime.CapabilitiesOf(s.ver),
		Reloads: s.procs.Master.Reloads, FailedReloads: s.failed,
		LastApply: s.lastApply, LastReload: s.lastReload,
		Workers:          []Worker{},
		ServerDivergence: s.serverDiv, MapDivergence: s.mapDiv, LastVerify: s.lastVerify,
	}
	for _, w := range s.procs.Workers {
		st.Workers = append(st.Workers, Worker{PID: w.PID, Reloads: w.Reloads, Uptime: w.Uptime})
	}
	s.mu.Unlock()

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
