package agent

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
)

// Handler is the agent's HTTP API:
//
//	PUT  /v1/config   apply a file set (ConfigRequest → Result)
//	GET  /v1/config   the set the agent runs and its HAProxy version (CurrentConfig;
//	                  holds certificate keys)
//	POST /v1/runtime  apply runtime operations (RuntimeRequest → Result)
//	GET  /v1/state    State; ?verify=runtime first runs VerifyRuntime (map files
//	                  and server lines on disk against the worker's `show map` and
//	                  `show servers state`, corrected on divergence)
//	GET  /healthz     200 while the HAProxy master runs (no auth)
//	GET  /livez       200 while the agent serves (no auth)
//
// Every /v1 route needs HTTP basic auth with the agent's credentials.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+agentapi.PathHealthz, func(w http.ResponseWriter, r *http.Request) {
		if !a.Running() {
			http.Error(w, "haproxy is not running", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET "+agentapi.PathLivez, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("PUT "+agentapi.PathConfig, a.auth(func(w http.ResponseWriter, r *http.Request) {
		var req agentapi.ConfigRequest
		if !decode(w, r, &req) {
			return
		}
		res, status := a.ApplyConfig(r.Context(), req)
		writeResponse(w, status, res)
	}))
	mux.Handle("GET "+agentapi.PathConfig, a.auth(a.serveCurrent))
	mux.Handle("POST "+agentapi.PathRuntime, a.auth(func(w http.ResponseWriter, r *http.Request) {
		var req agentapi.RuntimeRequest
		if !decode(w, r, &req) {
			return
		}
		res, status := a.ApplyRuntime(r.Context(), req)
		writeResponse(w, status, res)
	}))
	mux.Handle("GET "+agentapi.PathState, a.auth(func(w http.ResponseWriter, r *http.Request) {
		switch v := r.URL.Query().Get(agentapi.QueryVerify); v {
		case "":
		case agentapi.VerifyRuntime:
			a.VerifyRuntime(r.Context())
		default:
			writeResponse(w, http.StatusBadRequest, map[string]string{"error": "verify: want runtime, not " + v})
			return
		}
		writeResponse(w, http.StatusOK, a.State(r.Context()))
	}))
	return mux
}

// auth checks HTTP basic credentials in constant time (comparing digests, so that
// lengths do not leak either).
func (a *Agent) auth(next http.HandlerFunc) http.Handler {
	wantUser := sha256.Sum256([]byte(a.opts.Username))
	wantPass := sha256.Sum256([]byte(a.opts.Password))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		u := sha256.Sum256([]byte(user))
		p := sha256.Sum256([]byte(pass))
		userOK := subtle.ConstantTimeCompare(u[:], wantUser[:])
		passOK := subtle.ConstantTimeCompare(p[:], wantPass[:])
		if !ok || userOK&passOK != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+agentapi.Realm+`"`)
			writeResponse(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
			return
		}
		next(w, r)
	})
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, agentapi.MaxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeResponse(w, http.StatusBadRequest, agentapi.Result{Result: agentapi.ResultError, Error: "decode request: " + err.Error()})
		return false
	}
	return true
}

func writeResponse(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
