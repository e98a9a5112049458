package agent

import (
	"fmt"
	"net/http"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// prepared is a runtime request's resulting set: next (the current set with the
// request's files; the edited ones filled in once edited is set), the current
// files its edits splice (bases) and the edits themselves.
type prepared struct {
	next   *bundle.Bundle
	bases  []bundle.File
	edits  []agentapi.FileEdit
	edited []bundle.File
	// from and hash: the set it was made from and the request's resulting set
	// (prepared ahead only).
	from, hash string
}

// PrepareRuntime does the work of a runtime request that does not touch HAProxy —
// the checks, and the splice and hash of every edited file — before the request
// comes: the controller sends it while the API server stores the change it was
// planned for, so that ApplyRuntime of the same request (the same base and
// resulting set) only runs the operations and reads them back. One request is
// kept prepared; any other apply drops it.
func (a *Agent) PrepareRuntime(req agentapi.RuntimeRequest) (agentapi.Result, int) {
	res := agentapi.Result{Hash: req.Hash}
	fail := func(status int, format string, args ...any) (agentapi.Result, int) {
		res.Result, res.Error = agentapi.ResultError, fmt.Sprintf(format, args...)
		return res, status
	}
	if err := checkMaps(req.Files); err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if req.BaseHash != a.current.Hash {
		return fail(http.StatusConflict, "base hash %s is not the running set %s", req.BaseHash, a.current.Hash)
	}
	next, bases, status, err := resulting(a.opts.Layout, a.current, req)
	if err != nil {
		return fail(status, "%v", err)
	}
	edited, err := fillEdits(next, req.Edits, bases)
	if err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	a.ahead = &prepared{next: next, bases: bases, edits: req.Edits, edited: edited, from: a.current.Hash, hash: req.Hash}
	res.Result = agentapi.ResultPrepared
	return res, http.StatusOK
}

// takePrepared returns the set prepared for req — made from the current set, with
// the same resulting set — or nil, and drops what was prepared. Callers hold a.mu.
func (a *Agent) takePrepared(req agentapi.RuntimeRequest) *prepared {
	p := a.ahead
	a.ahead = nil
	if p == nil || p.from != a.current.Hash || p.hash != req.Hash {
		return nil
	}
	return p
}

// resulting checks a runtime request's files against cur and returns the set
// they make (edited files with their declared hashes and no content yet, see
// fillEdits), and the files of cur the edits splice. Only what is cheap is
// checked: the edits' bases, the lines they write, the file names and the set
// hash the files' hashes make.
func resulting(layout bundle.Layout, cur *bundle.Bundle, req agentapi.RuntimeRequest) (*bundle.Bundle, []bundle.File, int, error) {
	bases, status, err := editBases(cur, req.Edits)
	if err != nil {
		return nil, nil, status, err
	}
	declared := make([]bundle.File, len(bases))
	for i, b := range bases {
		declared[i] = bundle.File{Kind: b.Kind, Name: b.Name, Hash: req.Edits[i].Hash}
	}
	next, err := merge(cur, req.Files, declared)
	if err != nil {
		return nil, nil, http.StatusBadRequest, err
	}
	if next.Hash != req.Hash {
		return nil, nil, http.StatusBadRequest, fmt.Errorf("hash %q does not match the resulting set (%s)", req.Hash, next.Hash)
	}
	if err := checkFiles(layout, next.Files); err != nil {
		return nil, nil, http.StatusBadRequest, err
	}
	return next, bases, 0, nil
}
