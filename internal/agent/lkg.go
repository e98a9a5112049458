package agent

import (
	"fmt"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// lkgWriteDelay is how long a runtime apply's last known good set may wait to be
// written: the file is the whole set as JSON, whose encoding would otherwise be
// most of a small apply's cost; applies inside the delay write it once. A crash
// inside it leaves the previous set in the file, which also ran verified.
const lkgWriteDelay = time.Second

// setLKG records b as the last known good set and writes it now (reloads: the
// file must hold what a failed next reload restores).
func (a *Agent) setLKG(b *bundle.Bundle, aliases map[string]string) error {
	a.lkg, a.lkgAliases = b, aliases
	a.lkgGen++
	a.lkgDue = nil
	return a.writeLKG(b, a.lkgGen)
}

// setLKGSoon records b as the last known good set and writes it within
// lkgWriteDelay (runtime applies). Callers hold a.mu.
func (a *Agent) setLKGSoon(b *bundle.Bundle, aliases map[string]string) {
	a.lkg, a.lkgAliases = b, aliases
	a.lkgGen++
	a.lkgDue = b
	if !a.lkgTimerSet {
		a.lkgTimerSet = true
		time.AfterFunc(lkgWriteDelay, a.flushLKG)
	}
}

// flushLKG writes the last known good set if a runtime apply left it unwritten.
func (a *Agent) flushLKG() {
	a.mu.Lock()
	b, gen := a.lkgDue, a.lkgGen
	a.lkgDue, a.lkgTimerSet = nil, false
	a.mu.Unlock()
	if b == nil {
		return
	}
	if err := a.writeLKG(b, gen); err != nil {
		a.opts.Logger.Warn("could not save the last known good set", "error", err)
	}
}

// writeLKG writes b, the set of generation gen, unless a later one was written.
func (a *Agent) writeLKG(b *bundle.Bundle, gen uint64) error {
	a.lkgWriteMu.Lock()
	defer a.lkgWriteMu.Unlock()
	if gen <= a.lkgWritten {
		return nil
	}
	if err := writeJSON(a.opts.lkgPath(), b); err != nil {
		return fmt.Errorf("save last known good: %w", err)
	}
	a.lkgWritten = gen
	return nil
}
