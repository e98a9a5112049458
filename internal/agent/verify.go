package agent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// VerifyRuntime checks that the worker runs what is on disk: every map file of the
// current set holds what the worker's `show map` holds (as multisets; see
// runtime.DiffMap; maps the worker did not load from that path are not compared),
// and every server of `show servers state` matches its line in haproxy.cfg (see
// serverDiff). A diverging map is replaced at runtime with the file's entries
// (runtime.ReplaceMap, atomic) and read back; if that fails or still differs, or a
// server diverges, the files on disk are reloaded. The result is recorded for
// GET /v1/state (LastVerify, MapDivergence, ServerDivergence).
func (a *Agent) VerifyRuntime(ctx context.Context) agentapi.VerifyRecord {
	start := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	rec := agentapi.VerifyRecord{At: start.UTC()}
	if err := a.verify(ctx, &rec); err != nil {
		rec.Error = err.Error()
	}
	rec.DurationMs = time.Since(start).Milliseconds()
	a.st.recordVerify(rec)
	if rec.MapDivergence > 0 || rec.ServerDivergence > 0 || rec.Error != "" {
		a.opts.Logger.Warn("runtime verification", "mapDivergence", rec.MapDivergence, "serverDivergence", rec.ServerDivergence,
			"divergences", strings.Join(rec.Divergences, "; "), "corrected", rec.Corrected, "error", rec.Error)
	}
	return rec
}

func (a *Agent) verify(ctx context.Context, rec *agentapi.VerifyRecord) error {
	if a.current == nil || a.proc == nil {
		return fmt.Errorf("verify: haproxy is not started")
	}
	// The worker is compared with the files on disk: they must be current's.
	if err := a.writeUnwritten(); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	mapsCorrected, err := a.verifyMaps(ctx, rec)
	if err != nil {
		return err
	}
	if err := a.verifyServers(ctx, rec); err != nil {
		return err
	}
	switch {
	case !mapsCorrected || rec.ServerDivergence > 0:
		rec.Corrected = "reload"
		if _, err := a.reload(ctx, 0); err != nil {
			return fmt.Errorf("verify: reload after a divergence failed: %w", err)
		}
	case rec.MapDivergence > 0:
		rec.Corrected = "runtime"
	}
	return nil
}

// verifyMaps compares (and corrects at runtime) the maps; false: a correction did
// not take.
func (a *Agent) verifyMaps(ctx context.Context, rec *agentapi.VerifyRecord) (bool, error) {
	out, err := a.admin.Do(ctx, "show map")
	if err != nil {
		return true, fmt.Errorf("verify: %w", err)
	}
	list, err := runtime.ParseMapList(out)
	if err != nil {
		return true, fmt.Errorf("verify: %w", err)
	}
	loaded := make(map[string]bool, len(list))
	for _, m := range list {
		loaded[m.File] = true
	}
	corrected := true
	for _, f := range a.current.Files {
		if f.Kind != bundle.KindMap || !loaded[a.mapPath(f.Name)] {
			continue
		}
		data, err := os.ReadFile(a.mapPath(f.Name))
		if err != nil {
			return true, fmt.Errorf("verify map %s: %w", f.Name, err)
		}
		rec.Maps++
		d, err := a.diffMap(ctx, f.Name, string(data))
		if err != nil {
			return true, fmt.Errorf("verify: %w", err)
		}
		if d.Empty() {
			continue
		}
		rec.MapDivergence++
		rec.Divergences = append(rec.Divergences, "map "+f.Name+": "+d.String())
		if !a.correctMap(ctx, f.Name, string(data)) {
			corrected = false
		}
	}
	return corrected, nil
}

// verifyServers compares every running server with haproxy.cfg as it is on disk.
// Backends with lines that make servers of their own (server-template) are skipped.
func (a *Agent) verifyServers(ctx context.Context, rec *agentapi.VerifyRecord) error {
	data, err := os.ReadFile(a.opts.Layout.ConfigFile)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	cfg, templated, err := configServers(string(data))
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	running, err := runtime.ShowServersState(ctx, a.admin, "")
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	got := map[string]map[string]runtime.ServerState{}
	for _, s := range running {
		if got[s.Backend] == nil {
			got[s.Backend] = map[string]runtime.ServerState{}
		}
		got[s.Backend][s.Server] = s
	}
	for _, be := range sortedKeys(union(cfg, got)) {
		if templated[be] {
			continue
		}
		for _, name := range sortedKeys(union(cfg[be], got[be])) {
			want, inCfg := cfg[be][name]
			state, isRunning := got[be][name]
			rec.Servers++
			if msg := serverDiff(false, want, inCfg, state, isRunning); msg != "" {
				rec.ServerDivergence++
				rec.Divergences = append(rec.Divergences, "server "+be+"/"+name+": "+msg)
			}
		}
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
