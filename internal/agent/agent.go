package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
	"github.com/haproxy-haptic/haptic/internal/validate/haproxycheck"
)

// Agent supervises one HAProxy and applies file sets and runtime operations to it.
type Agent struct {
	opts   Options
	master *runtime.Client // master CLI: reload, show proc
	admin  *runtime.Client // current worker's stats socket: runtime API

	// mu serializes everything that changes files or running state: applies,
	// runtime operations and reloads.
	mu   sync.Mutex
	proc *process
	// running is proc for readers that must not wait for an apply (/healthz).
	running atomic.Pointer[process]
	// current is the set on disk and running (full content), lkg the last set that
	// was verified running; normally equal.
	current, lkg *bundle.Bundle
	// aliases and lkgAliases are the controller's aliases of current and lkg
	// (RuntimeRequest.Aliases), returned by Current for a controller's plan.
	aliases, lkgAliases map[string]string
	// lkgGen counts last known good sets; lkgDue is one a runtime apply has not
	// written yet (lkg.go), lkgTimerSet whether its write is scheduled. Guarded by mu.
	lkgGen      uint64
	lkgDue      *bundle.Bundle
	lkgTimerSet bool
	// lkgWriteMu orders writes of the file; lkgWritten is the generation it holds.
	lkgWriteMu sync.Mutex
	lkgWritten uint64
	// unwritten are the files of current a runtime apply changed and the disk
	// does not hold yet (writesoon.go); writeTimerSet whether their write is
	// scheduled. Guarded by mu.
	unwritten     map[fileKey]bool
	writeTimerSet bool
	// mapKeys indexes the maps the read-back looks keys up in. Guarded by mu.
	mapKeys mapKeys

	st statusRecorder
}

// New checks the options and returns an agent that has not started HAProxy yet.
func New(opts Options) (*Agent, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Agent{
		opts:   opts,
		master: &runtime.Client{Path: opts.masterSocket(), Timeout: 500 * time.Millisecond},
		admin:  &runtime.Client{Path: opts.adminSocket(), Timeout: 10 * time.Second},
	}, nil
}

// Start prepares the state dir and picks the set to run (the one on disk if any,
// else the bootstrap config). An HAProxy master an earlier agent process started
// for this state dir and that still serves is adopted (adopt.go: no restart, no
// reload; what it runs is read back against the set on disk); otherwise HAProxy
// is started and Start waits until it serves. With External nothing is started:
// Start writes the launch file and waits until HAProxy's container runs a master
// that serves, and adopts it.
func (a *Agent) Start(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := &a.opts
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	if err := writeFileAtomic(o.agentConfig(), []byte(o.agentConfigText()), 0o600); err != nil {
		return err
	}
	if err := a.detectVersion(ctx); err != nil {
		return err
	}
	// Decided before loadCurrent, which writes the bootstrap config when no set
	// is on disk.
	adoptable := false
	if _, err := os.Stat(o.manifestPath()); err == nil {
		adoptable = true
	}
	cur, aliases, err := a.loadCurrent()
	if err != nil {
		return err
	}
	a.current, a.aliases = cur, aliases
	var lkg bundle.Bundle
	if err := readJSON(o.lkgPath(), &lkg); err == nil && lkg.Hash == bundle.New(lkg.Files).Hash {
		a.lkg = &lkg
	} else {
		a.lkg, a.lkgAliases = cur, aliases
	}
	if o.External {
		if err := o.writeLaunchFile(); err != nil {
			return err
		}
		if err := a.awaitMaster(ctx); err != nil {
			return err
		}
		a.readBackAdopted(ctx)
		return nil
	}
	if adoptable {
		adopted, why, err := a.adopt(ctx)
		if err != nil {
			return err
		}
		if adopted {
			a.readBackAdopted(ctx)
			return nil
		}
		o.Logger.Warn("not adopting haproxy; starting anew", "reason", why)
	}
	if err := stopOrphan(o); err != nil {
		return err
	}
	o.Logger.Info("starting haproxy", "hash", cur.Hash, "files", len(cur.Files))
	return a.startWithFallback(ctx)
}

// startWithFallback starts HAProxy on the current set; if it does not come up, on
// the last known good set, then on the bootstrap config. Callers hold a.mu.
func (a *Agent) startWithFallback(ctx context.Context) error {
	err := a.startAndWait(ctx)
	if err == nil {
		return nil
	}
	for _, fb := range []*bundle.Bundle{a.lkg, a.bootstrap()} {
		if fb.Hash == a.current.Hash {
			continue
		}
		a.opts.Logger.Warn("haproxy did not start; falling back", "error", err, "hash", fb.Hash)
		aliases := a.lkgAliases
		if fb != a.lkg {
			aliases = nil
		}
		if ierr := a.installSet(fb, aliases); ierr != nil {
			return ierr
		}
		if err = a.startAndWait(ctx); err == nil {
			a.lkg = fb
			return nil
		}
	}
	return err
}

// Restart starts HAProxy again after its master exited on its own (killed,
// crashed): on the last known good set — the set that last ran verified — falling
// back as Start does. /healthz answers 503 until it serves. An error means nothing
// could be started. With External the agent starts nothing: it waits for HAProxy's
// container to be restarted and adopts its master (readoptAfterExit).
func (a *Agent) Restart(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.proc != nil && !a.proc.exited() {
		return nil
	}
	if a.opts.External {
		return a.readoptAfterExit(ctx)
	}
	if a.proc != nil {
		// The dead master's workers finish their connections and leave the
		// listeners and the admin socket to the new ones.
		a.proc.signalGroup(syscall.SIGUSR1)
	}
	if a.lkg != nil && a.lkg.Hash != a.current.Hash {
		if err := a.installSet(a.lkg, a.lkgAliases); err != nil {
			return err
		}
	}
	a.opts.Logger.Warn("haproxy master exited; restarting it", "hash", a.current.Hash)
	if err := a.startWithFallback(ctx); err != nil {
		return err
	}
	a.st.countRestart()
	a.opts.Logger.Info("haproxy restarted", "hash", a.current.Hash)
	return nil
}

// readoptAfterExit is Restart with HAProxy in a container of its own: the
// launcher in that container starts a new master (or, should the launcher have
// died, the container runtime restarts the container), and
// the agent adopts the master it starts, on the last known good set. Callers hold
// a.mu.
func (a *Agent) readoptAfterExit(ctx context.Context) error {
	if a.lkg != nil && a.lkg.Hash != a.current.Hash {
		if err := a.installSet(a.lkg, a.lkgAliases); err != nil {
			return err
		}
	}
	if err := a.writeUnwritten(); err != nil {
		return err
	}
	a.opts.Logger.Warn("haproxy master exited; waiting for its container to start it again", "hash", a.current.Hash)
	if err := a.awaitMaster(ctx); err != nil {
		return err
	}
	a.st.countRestart()
	a.readBackAdopted(ctx)
	return nil
}

// loadCurrent rebuilds the current set from disk using the manifest; without a
// manifest an existing config file is the whole set; without a config file the
// bootstrap config is written.
func (a *Agent) loadCurrent() (*bundle.Bundle, map[string]string, error) {
	o := &a.opts
	var m manifest
	err := readJSON(o.manifestPath(), &m)
	if err == nil {
		b, terr := readTree(o.Layout, m)
		if terr == nil && b.Hash == m.Hash {
			return b, m.Aliases, nil
		}
		if terr == nil {
			// Changed on disk since: the aliases no longer describe it.
			return b, nil, nil
		}
		o.Logger.Warn("file set on disk is incomplete; using the config file alone", "error", terr)
	} else if !errors.Is(err, fs.ErrNotExist) {
		o.Logger.Warn("unreadable manifest; using the config file alone", "error", err)
	}
	data, err := os.ReadFile(o.Layout.ConfigFile)
	if errors.Is(err, fs.ErrNotExist) {
		b := a.bootstrap()
		return b, nil, a.installSet(b, nil)
	} else if err != nil {
		return nil, nil, fmt.Errorf("read config file: %w", err)
	}
	b := bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: filepath.Base(o.Layout.ConfigFile), Content: bundle.TextOf(string(data))}})
	return b, nil, writeJSON(o.manifestPath(), manifestOf(b))
}

func (a *Agent) bootstrap() *bundle.Bundle {
	text := a.opts.BootstrapConfig
	if text == "" {
		text = BootstrapConfig(a.opts.StatusAddress, a.opts.StatusPort)
	}
	return bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: filepath.Base(a.opts.Layout.ConfigFile), Content: bundle.TextOf(text)}})
}

// installSet makes b the set on disk (removing files of the current set it lacks)
// and records it, with the controller's aliases for it, in the manifest.
func (a *Agent) installSet(b *bundle.Bundle, aliases map[string]string) error {
	var prev []fileRef
	if a.current != nil {
		prev = manifestOf(a.current).Files
	}
	if err := install(a.opts.Layout, b.Files, prev); err != nil {
		return err
	}
	m := manifestOf(b)
	m.Aliases = aliases
	if err := writeJSON(a.opts.manifestPath(), m); err != nil {
		return err
	}
	a.current, a.aliases = b, aliases
	a.unwritten = nil // b is on disk whole
	return nil
}

func (a *Agent) detectVersion(ctx context.Context) error {
	raw, err := haproxycheck.Version(ctx, a.opts.Binary)
	if err != nil {
		return fmt.Errorf("detect haproxy version: %w", err)
	}
	v, err := runtime.ParseVersion(raw)
	if err != nil {
		return err
	}
	a.st.setVersion(v)
	return nil
}

// startAndWait starts HAProxy on the current set and waits for a worker that answers
// on the admin socket.
func (a *Agent) startAndWait(ctx context.Context) error {
	if err := a.writeUnwritten(); err != nil {
		return err
	}
	_ = os.Remove(a.opts.masterSocket())
	p, err := startHAProxy(&a.opts)
	if err != nil {
		return err
	}
	a.proc = p
	a.running.Store(p)
	ctx, cancel := context.WithTimeout(ctx, a.opts.ReloadVerificationTimeout)
	defer cancel()
	for {
		pl, err := a.showProc(ctx)
		if err == nil {
			if w, ok := pl.Current(); ok {
				if info, err := a.showInfo(ctx); err == nil && info.PID == w.PID {
					a.st.setVersion(mustVersion(info.Version, a.st.version()))
					a.st.setProcs(pl)
					return nil
				}
			}
		}
		if p.exited() {
			return fmt.Errorf("haproxy exited at start: %v", p.err)
		}
		select {
		case <-ctx.Done():
			_ = p.stop(time.Second)
			return fmt.Errorf("haproxy did not serve within %s", a.opts.ReloadVerificationTimeout)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func mustVersion(raw string, fallback runtime.Version) runtime.Version {
	v, err := runtime.ParseVersion(raw)
	if err != nil {
		return fallback
	}
	return v
}

// Close stops HAProxy gracefully (bounded by StopTimeout, then SIGTERM/SIGKILL),
// unless it runs in a container of its own (External): that container is stopped
// on its own, and an agent restart must leave it serving.
func (a *Agent) Close() error {
	a.flushLKG()
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.writeUnwritten(); err != nil {
		a.opts.Logger.Warn("could not write the files of a runtime apply", "error", err)
	}
	if a.proc == nil || a.opts.External {
		return nil
	}
	return a.proc.stop(a.opts.StopTimeout)
}

// Exited is closed when the HAProxy master started by Start (or Restart) exits on
// its own; the agent's command then calls Restart. Nil before Start.
func (a *Agent) Exited() <-chan struct{} {
	p := a.running.Load()
	if p == nil {
		return nil
	}
	return p.done
}

// Running reports whether the HAProxy master is up.
func (a *Agent) Running() bool {
	p := a.running.Load()
	return p != nil && !p.exited()
}

func (a *Agent) showProc(ctx context.Context) (runtime.ProcList, error) {
	out, err := a.master.Do(ctx, "show proc")
	if err != nil {
		return runtime.ProcList{}, err
	}
	return runtime.ParseShowProc(out)
}

func (a *Agent) showInfo(ctx context.Context) (runtime.Info, error) {
	out, err := a.admin.Do(ctx, "show info")
	if err != nil {
		return runtime.Info{}, err
	}
	return runtime.ParseShowInfo(out)
}
