package agentapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// fakeAgent answers the protocol's paths the way the agent does, for the client's
// unit tests (the agent's own tests run the client against the real server).
func fakeAgent(t *testing.T, cur CurrentConfig) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	auth := func(next http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "u" || p != "p" {
				http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
				return
			}
			next(w, r)
		}
	}
	mux.HandleFunc("PUT "+PathConfig, auth(func(w http.ResponseWriter, r *http.Request) {
		var req ConfigRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("PUT %s: %v", PathConfig, err)
		}
		_ = json.NewEncoder(w).Encode(Result{Hash: req.Hash, Result: ResultApplied, Reloaded: true})
	}))
	mux.HandleFunc("GET "+PathConfig, auth(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(cur)
	}))
	mux.HandleFunc("GET "+PathState, auth(func(w http.ResponseWriter, r *http.Request) {
		st := State{Hash: cur.Hash, HAProxyVersion: "2.6.12"}
		if r.URL.Query().Get(QueryVerify) == VerifyRuntime {
			st.LastVerify = &VerifyRecord{Maps: 1}
		}
		_ = json.NewEncoder(w).Encode(st)
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestClient(t *testing.T) {
	b := bundle.New([]bundle.File{{Name: "haproxy.cfg", Kind: bundle.KindConfig, Content: bundle.TextOf("global\n")}})
	srv := fakeAgent(t, CurrentConfig{ConfigRequest: ConfigRequest{Hash: b.Hash, Files: b.Files}, HAProxyVersion: "2.6.12"})
	c := &Client{BaseURL: srv.URL, Username: "u", Password: "p"}
	ctx := context.Background()

	if res, err := c.Apply(ctx, b); err != nil || res.Result != ResultApplied || res.Hash != b.Hash {
		t.Fatalf("Apply: %+v %v", res, err)
	}
	if st, err := c.State(ctx); err != nil || st.HAProxyVersion != "2.6.12" || st.LastVerify != nil {
		t.Fatalf("State: %+v %v", st, err)
	}
	if st, err := c.VerifyState(ctx); err != nil || st.LastVerify == nil {
		t.Fatalf("VerifyState: %+v %v", st, err)
	}
	got, version, err := c.Config(ctx)
	if err != nil || got.Hash != b.Hash || version != "2.6.12" {
		t.Fatalf("Config: %v %q %v", got, version, err)
	}

	bad := &Client{BaseURL: srv.URL, Username: "u", Password: "wrong"}
	_, err = bad.State(ctx)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusUnauthorized || !strings.Contains(se.Body, "unauthorized") {
		t.Fatalf("wrong password: %v", err)
	}
}

// TestClientRefusesAMismatchedSet: GET /v1/config's hash must match its files.
func TestClientRefusesAMismatchedSet(t *testing.T) {
	srv := fakeAgent(t, CurrentConfig{ConfigRequest: ConfigRequest{Hash: "not-the-hash", Files: []bundle.File{
		{Name: "haproxy.cfg", Kind: bundle.KindConfig, Content: bundle.TextOf("global\n")}}}})
	c := &Client{BaseURL: srv.URL, Username: "u", Password: "p"}
	if _, _, err := c.Config(context.Background()); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("want a hash mismatch, got %v", err)
	}
}
