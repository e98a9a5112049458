package agent

import (
	"net/http"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// Current returns the set on disk and running. It waits for an apply in progress,
// so that it never returns a half-switched set.
func (a *Agent) Current() agentapi.CurrentConfig {
	a.mu.Lock()
	b, aliases := a.current, a.aliases
	a.mu.Unlock()
	if b == nil { // not started
		return agentapi.CurrentConfig{ConfigRequest: agentapi.ConfigRequest{Files: []bundle.File{}}}
	}
	files := make([]bundle.File, len(b.Files))
	copy(files, b.Files)
	return agentapi.CurrentConfig{
		ConfigRequest:  agentapi.ConfigRequest{Hash: b.Hash, Files: files},
		HAProxyVersion: a.st.version().Raw,
		Aliases:        aliases,
	}
}

func (a *Agent) serveCurrent(w http.ResponseWriter, _ *http.Request) {
	// The body holds private keys: no caching anywhere on the way.
	w.Header().Set("Cache-Control", "no-store")
	writeResponse(w, http.StatusOK, a.Current())
}
