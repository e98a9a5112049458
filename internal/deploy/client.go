package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agent"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// AgentClient talks to one haptic-agent.
type AgentClient struct {
	BaseURL            string
	Username, Password string
	HTTP               *http.Client
}

// ApplyResponse is the agent's answer to an apply; the agent package owns the wire
// types, the client only speaks them.
type ApplyResponse = agent.Result

// RuntimeRequest is the body of POST /v1/runtime.
type RuntimeRequest = agent.RuntimeRequest

// State is the part of GET /v1/state the controller reads.
type State struct {
	Hash           string          `json:"hash"`
	TreeHash       string          `json:"treeHash"`
	HAProxyVersion string          `json:"haproxyVersion"`
	Capabilities   map[string]bool `json:"capabilities"`
	Reloads        int             `json:"reloads"`
	FailedReloads  int             `json:"failedReloads"`
	// ServerDivergence and MapDivergence are the agent's cumulative divergence
	// counters (read-backs and runtime verifications).
	ServerDivergence int `json:"serverDivergence"`
	MapDivergence    int `json:"mapDivergence"`
	// LastVerify is the agent's last runtime verification (VerifyState runs one).
	LastVerify *agent.VerifyRecord `json:"lastVerify,omitempty"`
}

// StatusError is a non-2xx answer of the agent.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string { return fmt.Sprintf("agent answered %d: %s", e.Code, e.Body) }

// Apply pushes a complete file set.
func (c *AgentClient) Apply(ctx context.Context, b *bundle.Bundle) (ApplyResponse, error) {
	body, err := json.Marshal(agent.ConfigRequest{Hash: b.Hash, Files: b.Files})
	if err != nil {
		return ApplyResponse{}, err
	}
	var out ApplyResponse
	err = c.do(ctx, http.MethodPut, "/v1/config", body, &out)
	return out, err
}

// Runtime applies runtime operations without a reload (the agent falls back to a
// verified reload if one fails, and says so in the answer).
func (c *AgentClient) Runtime(ctx context.Context, req RuntimeRequest) (ApplyResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return ApplyResponse{}, err
	}
	var out ApplyResponse
	err = c.do(ctx, http.MethodPost, "/v1/runtime", body, &out)
	return out, err
}

// State reads the agent's state.
func (c *AgentClient) State(ctx context.Context) (State, error) {
	var s State
	err := c.do(ctx, http.MethodGet, "/v1/state", nil, &s)
	return s, err
}

// VerifyState has the agent compare its map files with the running worker (and
// correct divergence) before it reads the state: LastVerify is that verification.
func (c *AgentClient) VerifyState(ctx context.Context) (State, error) {
	var s State
	err := c.do(ctx, http.MethodGet, "/v1/state?verify=runtime", nil, &s)
	return s, err
}

// CurrentConfig is the agent's answer to GET /v1/config.
type CurrentConfig = agent.CurrentConfig

// Config reads the file set the agent runs and its HAProxy version. The answer
// holds certificate private keys: callers must not print or log the contents.
func (c *AgentClient) Config(ctx context.Context) (*bundle.Bundle, string, error) {
	var cur CurrentConfig
	if err := c.doLimit(ctx, http.MethodGet, "/v1/config", nil, &cur, agent.MaxBodyBytes); err != nil {
		return nil, "", err
	}
	b := bundle.New(cur.Files)
	if b.Hash != cur.Hash {
		return nil, "", fmt.Errorf("GET /v1/config: hash %s does not match the files (%s)", cur.Hash, b.Hash)
	}
	return b, cur.HAProxyVersion, nil
}

func (c *AgentClient) do(ctx context.Context, method, path string, body []byte, out any) error {
	return c.doLimit(ctx, method, path, body, out, 1<<20)
}

// doLimit is do with a bound on the answer's size.
func (c *AgentClient) doLimit(ctx context.Context, method, path string, body []byte, out any, limit int64) error {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(c.Username, c.Password)
	req.Header.Set("Content-Type", "application/json")
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &StatusError{Code: resp.StatusCode, Body: string(bytes.TrimSpace(data))}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}
