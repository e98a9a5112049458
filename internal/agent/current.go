package agent

import (
	"net/http"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// CurrentConfig is the answer of GET /v1/config: the file set the agent runs, in
// the shape of the PUT /v1/config body, and the HAProxy version that runs it (so
// that a client can plan against that version's runtime API). It carries
// certificate private keys: the route is behind the agent's basic auth, and
// clients must not print the contents.
type CurrentConfig struct {
	ConfigRequest
	HAProxyVersion string `json:"haproxyVersion"`
}

// Current returns the set on disk and running. It waits for an apply in progress,
// so that it never returns a half-switched set.
func (a *Agent) Current() CurrentConfig {
	a.mu.Lock()
	b := a.current
	a.mu.Unlock()
	if b == nil { // not started
		return CurrentConfig{ConfigRequest: ConfigRequest{Files: []bundle.File{}}}
	}
	files := make([]bundle.File, len(b.Files))
	copy(files, b.Files)
	return CurrentConfig{
		ConfigRequest:  ConfigRequest{Hash: b.Hash, Files: files},
		HAProxyVersion: a.st.version().Raw,
	}
}

func (a *Agent) serveCurrent(w http.ResponseWriter, _ *http.Request) {
	// The body holds private keys: no caching anywhere on the way.
	w.Header().Set("Cache-Control", "no-store")
	writeResponse(w, http.StatusOK, a.Current())
}
