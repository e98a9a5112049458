package agent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// VerifyRecord describes one runtime verification.
type VerifyRecord struct {
	At         time.Time `json:"at"`
	DurationMs int64     `json:"durationMs"`
	// Maps is how many map files were compared with the worker.
	Maps int `json:"maps"`
	// MapDivergence is how many of them differed; Divergences says how.
	MapDivergence int      `json:"mapDivergence"`
	Divergences   []string `json:"divergences,omitempty"`
	// Corrected is "runtime" (the maps were replaced at runtime) or "reload" (the
	// replacement failed or did not take, the files on disk were reloaded).
	Corrected string `json:"corrected,omitempty"`
	Error     string `json:"error,omitempty"`
}

// VerifyRuntime checks that every map file of the current set, as it is on disk,
// holds what the worker's `show map` holds (as multisets; see runtime.DiffMap). Maps
// the worker did not load from that path are not compared. A diverging map is
// replaced at runtime with the file's entries (runtime.ReplaceMap, atomic) and read
// back; if that fails or still differs, the files on disk are reloaded. The result
// is recorded for GET /v1/state (LastVerify, MapDivergence).
func (a *Agent) VerifyRuntime(ctx context.Context) VerifyRecord {
	start := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	rec := VerifyRecord{At: start.UTC()}
	if err := a.verifyMaps(ctx, &rec); err != nil {
		rec.Error = err.Error()
	}
	rec.DurationMs = time.Since(start).Milliseconds()
	a.st.recordVerify(rec)
	if rec.MapDivergence > 0 || rec.Error != "" {
		a.opts.Logger.Warn("runtime verification", "mapDivergence", rec.MapDivergence,
			"divergences", strings.Join(rec.Divergences, "; "), "corrected", rec.Corrected, "error", rec.Error)
	}
	return rec
}

func (a *Agent) verifyMaps(ctx context.Context, rec *VerifyRecord) error {
	if a.current == nil || a.proc == nil {
		return fmt.Errorf("verify: haproxy is not started")
	}
	out, err := a.admin.Do(ctx, "show map")
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	list, err := runtime.ParseMapList(out)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	loaded := make(map[string]bool, len(list))
	for _, m := range list {
		loaded[m.File] = true
	}
	reload := false
	for _, f := range a.current.Files {
		if f.Kind != bundle.KindMap || !loaded[a.mapPath(f.Name)] {
			continue
		}
		data, err := os.ReadFile(a.mapPath(f.Name))
		if err != nil {
			return fmt.Errorf("verify map %s: %w", f.Name, err)
		}
		rec.Maps++
		d, err := a.diffMap(ctx, f.Name, string(data))
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		if d.Empty() {
			continue
		}
		rec.MapDivergence++
		rec.Divergences = append(rec.Divergences, "map "+f.Name+": "+d.String())
		if !a.correctMap(ctx, f.Name, string(data)) {
			reload = true
		}
	}
	switch {
	case reload:
		rec.Corrected = "reload"
		if _, err := a.reload(ctx); err != nil {
			return fmt.Errorf("verify: reload after a map correction failed: %w", err)
		}
	case rec.MapDivergence > 0:
		rec.Corrected = "runtime"
	}
	return nil
}

// correctMap replaces a map's running entries with the file's and reports whether
// the worker then holds them.
func (a *Agent) correctMap(ctx context.Context, name, content string) bool {
	op := &runtime.ReplaceMap{Map: name, Entries: runtime.ParseMapFile(content)}
	if err := op.Validate(); err != nil {
		return false
	}
	if err := op.Run(ctx, a.admin, a.mapPath); err != nil {
		a.opts.Logger.Warn("runtime map correction failed", "map", name, "error", err)
		return false
	}
	d, err := a.diffMap(ctx, name, content)
	return err == nil && d.Empty()
}

// VerifyLoop runs VerifyRuntime every interval until ctx ends (interval <= 0: never).
func (a *Agent) VerifyLoop(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !a.Running() {
				continue
			}
			a.VerifyRuntime(ctx)
		}
	}
}
