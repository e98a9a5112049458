package agentapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// Client talks to one haptic-agent.
type Client struct {
	BaseURL            string
	Username, Password string
	HTTP               *http.Client
}

// StatusError is a non-2xx answer of the agent.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string { return fmt.Sprintf("agent answered %d: %s", e.Code, e.Body) }

// Apply pushes a complete file set.
func (c *Client) Apply(ctx context.Context, b *bundle.Bundle) (Result, error) {
	return c.ApplyRequest(ctx, ConfigRequest{Hash: b.Hash, Files: b.Files})
}

// ApplyRequest pushes a complete file set with the request's options.
func (c *Client) ApplyRequest(ctx context.Context, req ConfigRequest) (Result, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Result{}, err
	}
	var out Result
	err = c.do(ctx, http.MethodPut, PathConfig, body, &out, MaxAnswerBytes)
	return out, err
}

// Runtime applies runtime operations without a reload (the agent falls back to a
// verified reload if one fails, and says so in the answer).
func (c *Client) Runtime(ctx context.Context, req RuntimeRequest) (Result, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Result{}, err
	}
	var out Result
	err = c.do(ctx, http.MethodPost, PathRuntime, body, &out, MaxAnswerBytes)
	return out, err
}

// State reads the agent's state.
func (c *Client) State(ctx context.Context) (State, error) {
	var s State
	err := c.do(ctx, http.MethodGet, PathState, nil, &s, MaxAnswerBytes)
	return s, err
}

// VerifyState has the agent compare its map files and server lines with the running
// worker (and correct divergence) before it reads the state: LastVerify is that
// verification.
func (c *Client) VerifyState(ctx context.Context) (State, error) {
	var s State
	err := c.do(ctx, http.MethodGet, PathState+"?"+QueryVerify+"="+VerifyRuntime, nil, &s, MaxAnswerBytes)
	return s, err
}

// Config reads the file set the agent runs and its HAProxy version. The answer
// holds certificate private keys: callers must not print or log the contents.
func (c *Client) Config(ctx context.Context) (*bundle.Bundle, string, error) {
	r, err := c.Running(ctx)
	return r.Bundle, r.HAProxyVersion, err
}

// Running is what an agent runs, as GET /v1/config says it.
type Running struct {
	Bundle         *bundle.Bundle
	HAProxyVersion string
	// Aliases: see RuntimeRequest.Aliases.
	Aliases map[string]string
}

// Running reads the file set the agent runs, its HAProxy version and the aliases
// the set was made with. The bundle holds certificate private keys: callers must
// not print or log the contents.
func (c *Client) Running(ctx context.Context) (Running, error) {
	var cur CurrentConfig
	if err := c.do(ctx, http.MethodGet, PathConfig, nil, &cur, MaxBodyBytes); err != nil {
		return Running{}, err
	}
	b := bundle.New(cur.Files)
	if b.Hash != cur.Hash {
		return Running{}, fmt.Errorf("GET %s: hash %s does not match the files (%s)", PathConfig, cur.Hash, b.Hash)
	}
	return Running{Bundle: b, HAProxyVersion: cur.HAProxyVersion, Aliases: cur.Aliases}, nil
}

// do sends one request and decodes an answer of at most limit bytes into out.
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any, limit int64) error {
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
