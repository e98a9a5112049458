package agent

import (
	"fmt"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// fileWriteDelay is how long the files a runtime apply changed may wait to be
// written. The worker serves the change already; the disk matters only to what
// reads it (a reload, a start, the tree hash of State), and each of those writes
// what waits first. Applies inside the delay write each file once, and a change's
// copy of its maps to disk no longer holds up the next change. (At 100 ms, writing
// 2 MB of maps every two or three probe routes was a fifth of an agent's CPU, and
// held its lock 5–11 ms each time.)
const fileWriteDelay = time.Second

// writeSoon records files of a.current (a runtime apply changed them) to be
// written, with current's manifest, within fileWriteDelay. Callers hold a.mu.
func (a *Agent) writeSoon(files []bundle.File) {
	if a.unwritten == nil {
		a.unwritten = map[fileKey]bool{}
	}
	for _, f := range files {
		a.unwritten[keyOf(f)] = true
	}
	if !a.writeTimerSet {
		a.writeTimerSet = true
		time.AfterFunc(fileWriteDelay, a.writeDue)
	}
}

// writeRetryDelay is how long a failed write waits before it is tried again (by
// whatever reads the disk sooner).
const writeRetryDelay = time.Second

// writeDue writes what writeSoon recorded; a failure is logged and tried again.
func (a *Agent) writeDue() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.writeTimerSet = false
	if err := a.writeUnwritten(); err != nil {
		a.opts.Logger.Warn("could not write the files of a runtime apply; trying again", "error", err, "in", writeRetryDelay)
		a.writeTimerSet = true
		time.AfterFunc(writeRetryDelay, a.writeDue)
	}
}

// writeUnwritten makes the disk hold a.current: the files writeSoon recorded,
// then the manifest. Callers hold a.mu, and call it before anything that reads
// the set from disk.
func (a *Agent) writeUnwritten() error {
	if len(a.unwritten) == 0 {
		return nil
	}
	var files []bundle.File
	for _, f := range a.current.Files {
		if a.unwritten[keyOf(f)] {
			files = append(files, f)
		}
	}
	if err := install(a.opts.Layout, files, nil); err != nil {
		return fmt.Errorf("write files: %w", err)
	}
	m := manifestOf(a.current)
	m.Aliases = a.aliases
	if err := writeJSON(a.opts.manifestPath(), m); err != nil {
		return err
	}
	a.unwritten = nil
	return nil
}
