package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/validate/haproxycheck"
)

// ApplyConfig validates and applies a whole file set with a verified reload. It
// returns the HTTP status that goes with the result.
func (a *Agent) ApplyConfig(ctx context.Context, req agentapi.ConfigRequest) (agentapi.Result, int) {
	start := time.Now()
	b := bundle.New(req.Files)
	res := agentapi.Result{Hash: b.Hash}
	done := func(status int) (agentapi.Result, int) {
		res.DurationMs = time.Since(start).Milliseconds()
		return res, status
	}
	if req.Hash != b.Hash {
		res.Result, res.Error = agentapi.ResultError, fmt.Sprintf("hash %q does not match the files (%s)", req.Hash, b.Hash)
		return done(http.StatusBadRequest)
	}
	if err := checkFiles(a.opts.Layout, b.Files); err != nil {
		res.Result, res.Error = agentapi.ResultError, err.Error()
		return done(http.StatusBadRequest)
	}
	if err := checkMaps(b.Files); err != nil {
		res.Result, res.Error = agentapi.ResultError, err.Error()
		return done(http.StatusBadRequest)
	}
	timeout, err := requestTimeout(req.ReloadVerificationTimeoutMs)
	if err != nil {
		res.Result, res.Error = agentapi.ResultError, err.Error()
		return done(http.StatusBadRequest)
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	// From here on a client that goes away must not leave a half-done apply.
	ctx = context.WithoutCancel(ctx)
	if b.Hash == a.current.Hash {
		// Same set: nothing to do unless the files on disk drifted (once what waits
		// to be written is).
		if err := a.writeUnwritten(); err != nil {
			a.opts.Logger.Warn("could not write the files of a runtime apply", "error", err)
		} else if tree, err := readTree(a.opts.Layout, manifestOf(a.current)); err == nil && tree.Hash == b.Hash {
			res.Result = agentapi.ResultUnchanged
			return done(http.StatusOK)
		}
	}
	if err := a.check(ctx, b); err != nil {
		res.Result, res.Error = agentapi.ResultInvalid, err.Error()
		var herr *haproxycheck.HAProxyError
		if errors.As(err, &herr) {
			res.Alerts = herr.Alerts
			a.st.recordApply(agentapi.ApplyRecord{At: start.UTC(), Hash: b.Hash, Result: agentapi.ResultInvalid, Error: err.Error(), Mode: "reload"})
			return done(http.StatusUnprocessableEntity)
		}
		res.Result = agentapi.ResultError
		return done(http.StatusInternalServerError)
	}
	status := a.switchTo(ctx, b, nil, timeout, &res)
	a.opts.Logger.Info("apply", "hash", b.Hash, "result", res.Result, "reloadID", res.ReloadID,
		"ms", time.Since(start).Milliseconds(), "error", res.Error)
	a.st.recordApply(agentapi.ApplyRecord{At: start.UTC(), Hash: b.Hash, Result: res.Result, Error: res.Error, Mode: "reload"})
	return done(status)
}

// switchTo installs b (made with the controller's aliases), reloads and verifies
// within timeout (0: the agent's default); on failure it restores the last known
// good set, verified within the agent's own timeout. Callers hold a.mu and have
// validated b.
func (a *Agent) switchTo(ctx context.Context, b *bundle.Bundle, aliases map[string]string, timeout time.Duration, res *agentapi.Result) int {
	err := a.installSet(b, aliases)
	if err == nil {
		var id int
		id, err = a.reload(ctx, timeout)
		res.Reloaded, res.ReloadID = true, id
		if err == nil {
			res.Result = agentapi.ResultApplied
			if err := a.setLKG(b, aliases); err != nil {
				res.Error = err.Error()
			}
			return http.StatusOK
		}
	}
	a.opts.Logger.Warn("apply failed; restoring last known good", "hash", b.Hash, "lkg", a.lkg.Hash, "error", err)
	res.Error = err.Error()
	if rerr := a.restoreLKG(ctx); rerr != nil {
		res.Result = agentapi.ResultRollbackFailed
		res.Error = fmt.Sprintf("%v; restoring last known good %s: %v", err, a.lkg.Hash, rerr)
		return http.StatusInternalServerError
	}
	res.Result = agentapi.ResultRolledBack
	return http.StatusBadGateway
}

// restoreLKG puts the last known good set back on disk and reloads it.
func (a *Agent) restoreLKG(ctx context.Context) error {
	if err := a.installSet(a.lkg, a.lkgAliases); err != nil {
		return err
	}
	// The verification window starts again for the restore, with the agent's own
	// timeout (a request's short one must not fail the restore too).
	_, err := a.reload(context.WithoutCancel(ctx), 0)
	return err
}
