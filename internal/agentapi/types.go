package agentapi

import (
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// ConfigRequest is the body of PUT /v1/config.
type ConfigRequest struct {
	Hash  string        `json:"hash"`
	Files []bundle.File `json:"files"`
	// ReloadVerificationTimeoutMs, when set, bounds how long the reload may take
	// to be verified before the agent restores the last known good set (at most
	// MaxReloadVerificationTimeout; unset: the agent's own default).
	ReloadVerificationTimeoutMs int64 `json:"reloadVerificationTimeoutMs,omitempty"`
}

// MaxReloadVerificationTimeout is the ceiling of a reload verification, on both
// sides of the protocol: a request asking for more is refused (400).
const MaxReloadVerificationTimeout = 60 * time.Second

// Result is the answer to an apply (PUT /v1/config or POST /v1/runtime).
type Result struct {
	Hash string `json:"hash"`
	// Result is applied, unchanged, invalid, rolled_back, rollback_failed,
	// reloaded-after-runtime-failure (an operation failed or the read-back found a
	// divergence) or error.
	Result     string   `json:"result"`
	Reloaded   bool     `json:"reloaded"`
	ReloadID   int      `json:"reloadID,omitempty"`
	DurationMs int64    `json:"durationMs"`
	Error      string   `json:"error,omitempty"`
	Alerts     []string `json:"alerts,omitempty"`
	// ServerDivergence and MapDivergence count the servers and maps that the
	// read-back after runtime operations found to differ from the resulting set
	// (deployment/runtime and runtime-map divergence); the agent then reloaded.
	ServerDivergence int `json:"serverDivergence,omitempty"`
	MapDivergence    int `json:"mapDivergence,omitempty"`
}

// Result values.
const (
	ResultApplied         = "applied"
	ResultUnchanged       = "unchanged"
	ResultInvalid         = "invalid"
	ResultRolledBack      = "rolled_back"
	ResultRollbackFailed  = "rollback_failed"
	ResultRuntimeFallback = "reloaded-after-runtime-failure"
	ResultError           = "error"
)

// RuntimeRequest is the body of POST /v1/runtime.
type RuntimeRequest struct {
	// BaseHash, when set, is the set the operations were planned against; the
	// request is refused (409) if the agent runs another one.
	BaseHash   string       `json:"baseHash,omitempty"`
	Operations []runtime.Op `json:"operations"`
	// Files are the files the operations make true on disk (changed or added
	// files; the rest of the current set is kept).
	Files []bundle.File `json:"files"`
	// Edits are changed files sent as splices of the agent's copy (FileEdit);
	// a file is in Files or in Edits, not both.
	Edits []FileEdit `json:"edits,omitempty"`
	// Hash is the hash of the whole resulting set.
	Hash string `json:"hash"`
	// Aliases is what the controller's plan says runs under other names on the
	// resulting set (desired backend → running backend, see plan.Running). The
	// agent keeps it with the set and returns it in CurrentConfig, so that a
	// controller that did not make the set (a new leader) can plan from it.
	Aliases map[string]string `json:"aliases,omitempty"`
	// ReloadVerificationTimeoutMs bounds a fallback reload (see ConfigRequest).
	ReloadVerificationTimeoutMs int64 `json:"reloadVerificationTimeoutMs,omitempty"`
}

// CurrentConfig is the answer of GET /v1/config: the file set the agent runs, in
// the shape of the PUT /v1/config body, and the HAProxy version that runs it (so
// that a client can plan against that version's runtime API). It carries
// certificate private keys: the route is behind the agent's basic auth, and
// clients must not print the contents.
type CurrentConfig struct {
	ConfigRequest
	HAProxyVersion string `json:"haproxyVersion"`
	// Aliases are the ones of the runtime request that made the set (none after
	// a whole-set apply).
	Aliases map[string]string `json:"aliases,omitempty"`
}

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
	Reloads       int `json:"reloads"`
	FailedReloads int `json:"failedReloads"`
	// HAProxyRestarts counts the times the agent started HAProxy again after its
	// master exited on its own (Reloads starts from 0 then).
	HAProxyRestarts int           `json:"haproxyRestarts,omitempty"`
	LastApply       *ApplyRecord  `json:"lastApply,omitempty"`
	LastReload      *ReloadRecord `json:"lastReload,omitempty"`
	Workers         []Worker      `json:"workers"`
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

// VerifyRecord describes one runtime verification.
type VerifyRecord struct {
	At         time.Time `json:"at"`
	DurationMs int64     `json:"durationMs"`
	// Maps is how many map files were compared with the worker.
	Maps int `json:"maps"`
	// MapDivergence is how many of them differed; Divergences says how.
	MapDivergence int `json:"mapDivergence"`
	// Servers is how many servers were compared with the configuration on disk;
	// ServerDivergence how many differed (running but not configured, configured
	// but not running, address, weight when the line sets it, maintenance state).
	Servers          int      `json:"servers"`
	ServerDivergence int      `json:"serverDivergence"`
	Divergences      []string `json:"divergences,omitempty"`
	// Corrected is "runtime" (the maps were replaced at runtime) or "reload" (a
	// server diverged, or a map replacement failed or did not take: the files on
	// disk were reloaded).
	Corrected string `json:"corrected,omitempty"`
	Error     string `json:"error,omitempty"`
}
