package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
	"github.com/haproxy-haptic/haptic/internal/validate/haproxycheck"
)

// ApplyRuntime applies runtime operations to the running worker without a reload,
// reads back the servers and maps they touched (see readBack), and has the files
// written soon (writeSoon) so that disk matches what runs. If an operation fails or
// the read-back finds a divergence, the resulting set is validated and applied with
// a verified reload instead. The edited files are spliced and hashed after the operations ran, so
// that a large map's copy and hash do not delay the change: a request whose
// result does not hash as it says (a controller bug) is refused then, and the
// running set is reloaded to forget its operations.
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
	// Only what is cheap is checked before the operations: the edits' bases, the
	// lines they write, the file names and the set hash the edits' own hashes
	// make. Splicing and hashing the edited files (a copy and a hash of each whole
	// map) waits until the worker already serves the change.
	bases, status, err := editBases(a.current, req.Edits)
	if err != nil {
		return fail(status, "%v", err)
	}
	declared := make([]bundle.File, len(bases))
	for i, b := range bases {
		declared[i] = bundle.File{Kind: b.Kind, Name: b.Name, Hash: req.Edits[i].Hash}
	}
	next, err := merge(a.current, req.Files, declared)
	if err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	if next.Hash != req.Hash {
		return fail(http.StatusBadRequest, "hash %q does not match the resulting set (%s)", req.Hash, next.Hash)
	}
	if err := checkFiles(a.opts.Layout, next.Files); err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}

	record := func(mode string) {
		a.st.recordApply(agentapi.ApplyRecord{At: start.UTC(), Hash: req.Hash, Result: res.Result, Error: res.Error, Mode: mode})
	}
	var opErr error
	ran, failed, err := runtime.RunOps(ctx, a.admin, a.mapPath, req.Operations)
	if err != nil {
		opErr = fmt.Errorf("operation %d: %w", failed, err)
	}
	edited, err := fillEdits(next, req, bases)
	if err != nil {
		// An edit does not make the file its hash names: forget the operations by
		// reloading what runs now, and refuse the request.
		res.Result, res.Error = agentapi.ResultError, err.Error()
		if ran > 0 {
			if _, rerr := a.reload(ctx, timeout); rerr != nil {
				res.Error += fmt.Sprintf("; reload of the current set: %v", rerr)
			}
		}
		record("runtime")
		return done(http.StatusBadRequest)
	}
	for i, e := range req.Edits {
		if e.Kind == bundle.KindMap {
			a.mapKeys.edited(e.Name, bases[i].Content, edited[i].Content, e)
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
		a.current, a.aliases = next, req.Aliases
		a.writeSoon(req.Files)
		a.writeSoon(edited)
		res.Result = agentapi.ResultApplied
		a.setLKGSoon(next, req.Aliases)
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
	status = a.switchTo(ctx, next, req.Aliases, timeout, &res)
	if res.Result == agentapi.ResultApplied {
		res.Result = agentapi.ResultRuntimeFallback
		res.Error = opErr.Error()
	}
	record("reload")
	return done(status)
}

// fileKey names a file of a set: there is one config file, whatever its name.
type fileKey struct {
	kind bundle.Kind
	name string
}

func keyOf(f bundle.File) fileKey {
	if f.Kind == bundle.KindConfig {
		return fileKey{kind: f.Kind}
	}
	return fileKey{f.Kind, f.Name}
}

// merge returns cur with files and edited (hashed by the caller) replaced or
// added by (kind, name). Only the files that arrived whole are hashed: the rest
// keep the hashes the agent computed when they arrived, so an apply of a few
// lines does not rehash the whole set. A file both whole and edited is refused.
func merge(cur *bundle.Bundle, files, edited []bundle.File) (*bundle.Bundle, error) {
	byKey := make(map[fileKey]int, len(cur.Files)+len(files))
	out := make([]bundle.File, 0, len(cur.Files)+len(files))
	for _, f := range cur.Files {
		byKey[keyOf(f)] = len(out)
		out = append(out, f)
	}
	sent := make(map[fileKey]bool, len(files)+len(edited))
	put := func(f bundle.File) error {
		k := keyOf(f)
		if sent[k] {
			return fmt.Errorf("file %s: sent twice", f.Target())
		}
		sent[k] = true
		if i, ok := byKey[k]; ok {
			out[i] = f
			return nil
		}
		byKey[k] = len(out)
		out = append(out, f)
		return nil
	}
	for _, f := range files {
		f.Hash = bundle.HashText(f.Content)
		if err := put(f); err != nil {
			return nil, err
		}
	}
	for _, f := range edited {
		if err := put(f); err != nil {
			return nil, err
		}
	}
	return bundle.Assemble(out), nil
}

// editBases returns the files of cur that edits splice, in edit order. An edit of
// a file cur lacks or holds with another content is a conflict (409: the
// controller planned against another set); splices outside their base, or a map
// line the runtime API cannot reproduce, are refused (400). Only the lines the
// splices write are checked (the rest passed when it arrived), and nothing is
// built or hashed.
func editBases(cur *bundle.Bundle, edits []agentapi.FileEdit) ([]bundle.File, int, error) {
	if len(edits) == 0 {
		return nil, 0, nil
	}
	have := make(map[fileKey]bundle.File, len(cur.Files))
	for _, f := range cur.Files {
		have[keyOf(f)] = f
	}
	bases := make([]bundle.File, 0, len(edits))
	for _, e := range edits {
		base, ok := have[keyOf(bundle.File{Kind: e.Kind, Name: e.Name})]
		if !ok || base.Hash != e.BaseHash {
			return nil, http.StatusConflict, fmt.Errorf("edit of %s:%s: the agent does not hold its base %s", e.Kind, e.Name, e.BaseHash)
		}
		touched, err := e.Touched(base.Content)
		if err != nil {
			return nil, http.StatusBadRequest, err
		}
		if base.Kind == bundle.KindMap {
			if err := config.CheckMapFile(strings.Join(touched, "\n")); err != nil {
				return nil, http.StatusBadRequest, fmt.Errorf("map file %s: %w", base.Name, err)
			}
		}
		bases = append(bases, base)
	}
	return bases, 0, nil
}

// fillEdits gives next, the resulting set with the edited files' declared hashes,
// their contents: spliced from their bases (checked by editBases), each of which
// must hash as its edit says (the set hash those hashes make was checked before).
// It returns the edited files, in edit order.
func fillEdits(next *bundle.Bundle, req agentapi.RuntimeRequest, bases []bundle.File) ([]bundle.File, error) {
	at := make(map[fileKey]int, len(next.Files))
	for i, f := range next.Files {
		at[keyOf(f)] = i
	}
	edited := make([]bundle.File, 0, len(req.Edits))
	for i, e := range req.Edits {
		content, err := e.Apply(bases[i].Content)
		if err != nil {
			return nil, err
		}
		f := bundle.File{Kind: bases[i].Kind, Name: bases[i].Name, Content: content, Hash: bundle.HashEdited(bases[i].Content, content)}
		if f.Hash != e.Hash {
			return nil, fmt.Errorf("edit of %s: the result's hash is %s, not %s", f.Target(), f.Hash, e.Hash)
		}
		next.Files[at[keyOf(f)]] = f
		edited = append(edited, f)
	}
	return edited, nil
}
