package watch

import (
	"sync"
	"time"
)

// Debouncer is leading-edge: the first change in a quiet window fires at once, later
// changes inside the window are batched into one firing at the window's end. With a
// zero interval every change fires. This is the only debounce layer of the controller.
type Debouncer struct {
	interval time.Duration
	fire     func()

	mu        sync.Mutex
	lastFire  time.Time
	scheduled bool
	stopped   bool
	timer     *time.Timer
}

// NewDebouncer returns a debouncer calling fire.
func NewDebouncer(interval time.Duration, fire func()) *Debouncer {
	return &Debouncer{interval: interval, fire: fire}
}

// Trigger records a change.
func (d *Debouncer) Trigger() {
	if d.interval <= 0 {
		d.fire()
		return
	}
	d.mu.Lock()
	if d.stopped || d.scheduled {
		d.mu.Unlock()
		return
	}
	now := time.Now()
	if wait := d.interval - now.Sub(d.lastFire); wait > 0 {
		d.scheduled = true
		d.timer = time.AfterFunc(wait, d.trailing)
		d.mu.Unlock()
		return
	}
	d.lastFire = now
	d.mu.Unlock()
	d.fire()
}

func (d *Debouncer) trailing() {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	d.scheduled = false
	d.lastFire = time.Now()
	d.mu.Unlock()
	d.fire()
}

// Stop cancels a pending firing.
func (d *Debouncer) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
	}
}
