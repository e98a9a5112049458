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

// ApplyRuntime applies runtime operations to the running worker without a reload,
// reads back the servers and maps they touched (see readBack), then writes the files
// so that disk matches what runs. If an operation fails or the read-back finds a
// divergence, the resulting set is validated and applied with a verified reload
// instead.
func (a *Agent) ApplyRuntime(ctx context.Context, req agentapi.RuntimeRequest) (agentapi.Result, int) {
	start := time.Now()
	res := agentapi.Result{Hash: req.Hash}
	done := func(status int) (agentapi.Result, int) {
		res.DurationMs = time.Since(start).Milliseconds()
		return res, status
	}
	fail := func(status int, format string, args ...any) (agentapi.Result, int) {
		res.Result, res.Error = agentapi.ResultError, fmt.Sprintf(format, args...)
		return done(status)
	}
	for i, op := range req.Operations {
		if op.Operation == nil {
			return fail(http.StatusBadRequest, "operation %d: empty", i)
		}
		if err := op.Validate(); err != nil {
			return fail(http.StatusBadRequest, "operation %d: %v", i, err)
		}
	}
	if err := checkMaps(req.Files); err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	timeout, err := requestTimeout(req.ReloadVerificationTimeoutMs)
	if err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	if req.BaseHash != "" && req.BaseHash != a.current.Hash {
		return fail(http.StatusConflict, "base hash %s is not the running set %s", req.BaseHash, a.current.Hash)
	}
	next := merge(a.current, req.Files)
	if next.Hash != req.Hash {
		return fail(http.StatusBadRequest, "hash %q does not match the resulting set (%s)", req.Hash, next.Hash)
	}
	if err := checkFiles(a.opts.Layout, next.Files); err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}

	record := func(mode string) {
		a.st.recordApply(agentapi.ApplyRecord{At: start.UTC(), Hash: next.Hash, Result: res.Result, Error: res.Error, Mode: mode})
	}
	var opErr error
	for i, op := range req.Operations {
		if err := op.Run(ctx, a.admin, a.mapPath); err != nil {
			opErr = fmt.Errorf("operation %d: %w", i, err)
			break
		}
	}
	if opErr == nil {
		// Read back what the operations touched; a worker that does not run what
		// the resulting set says is reloaded like a failed operation.
		d, err := a.readBack(ctx, req.Operations, next)
		res.ServerDivergence, res.MapDivergence = len(d.servers), len(d.maps)
		a.st.addDivergence(len(d.servers), len(d.maps))
		switch {
		case err != nil:
			opErr = err
		case !d.empty():
			opErr = fmt.Errorf("read back: the worker diverges from the resulting set: %s", d)
		}
	}
	if opErr == nil {
		if err := install(a.opts.Layout, req.Files, nil); err != nil {
			// The worker runs the new state but the files did not land: reload
			// what is on disk so that both agree again.
			status := a.switchTo(ctx, a.current, a.aliases, timeout, &res)
			res.Result, res.Error = agentapi.ResultError, fmt.Sprintf("write files: %v (the previous set was reloaded: %s)", err, res.Result)
			record("runtime")
			if status == http.StatusOK {
				status = http.StatusInternalServerError
			}
			return done(status)
		}
		a.current, a.aliases = next, req.Aliases
		a.st.setCurrent(next.Hash, len(next.Files))
		res.Result = agentapi.ResultApplied
		m := manifestOf(next)
		m.Aliases = req.Aliases
		if err := writeJSON(a.opts.manifestPath(), m); err != nil {
			res.Error = err.Error()
		}
		if err := a.setLKG(next, req.Aliases); err != nil {
			res.Error = err.Error()
		}
		record("runtime")
		return done(http.StatusOK)
	}

	// Fallback: a verified reload of the resulting set (which also discards the
	// operations that did land).
	a.opts.Logger.Warn("runtime operations did not take; reloading instead", "error", opErr,
		"serverDivergence", res.ServerDivergence, "mapDivergence", res.MapDivergence)
	if err := a.check(ctx, next); err != nil {
		res.Result, res.Error = agentapi.ResultInvalid, fmt.Sprintf("%v; resulting set is invalid: %v", opErr, err)
		var herr *haproxycheck.HAProxyError
		if errors.As(err, &herr) {
			res.Alerts = herr.Alerts
		}
		// Reload the unchanged set so the worker forgets the partial operations.
		if _, rerr := a.reload(ctx, timeout); rerr != nil {
			res.Error += fmt.Sprintf("; reload of the current set: %v", rerr)
		}
		record("runtime")
		return done(http.StatusUnprocessableEntity)
	}
	status := a.switchTo(ctx, next, req.Aliases, timeout, &res)
	if res.Result == agentapi.ResultApplied {
		res.Result = agentapi.ResultRuntimeFallback
		res.Error = opErr.Error()
	}
	record("reload")
	return done(status)
}

// merge returns cur with files replaced or added by (kind, name).
func merge(cur *bundle.Bundle, files []bundle.File) *bundle.Bundle {
	type key struct {
		kind bundle.Kind
		name string
	}
	byKey := make(map[key]bundle.File, len(cur.Files)+len(files))
	var order []key
	for _, list := range [][]bundle.File{cur.Files, files} {
		for _, f := range list {
			k := key{f.Kind, f.Name}
			if f.Kind == bundle.KindConfig {
				k.name = "" // there is one config file, whatever its name
			}
			if _, ok := byKey[k]; !ok {
				order = append(order, k)
			}
			byKey[k] = f
		}
	}
	out := make([]bundle.File, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return bundle.New(out)
}
