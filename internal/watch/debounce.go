package watch

import (
	"sync"
	"time"
)

// Debouncer is leading-edge: the first change in a quiet window fires at once, later
// changes inside the window are batched into one firing at the window's end. With a
// zero interval every change fires. This is the only debounce layer of the controller.
//
// Quiet also means that what the last firing started is done: with Idle set, a change
// inside the window fires at once when Idle reports that nothing is being worked on
// (the controller renders nothing and no notification waits) and no other change came
// in the last tenth of the window; a change that comes within that tenth, or while the
// consumer is busy, fires as soon as both hold again (looked at every tenth), at the
// window's end at the latest. Batching exists to spare renders in a burst, whose
// changes come close together; a change that follows the last one's finished work
// would otherwise wait out the window for nothing (a route applied after the previous
// route served waited up to 100 ms, and a route applied amid other changes a few
// tens of milliseconds apart, such as a namespace of another class's Ingresses being
// deleted, waited most of the window behind the last of them).
type Debouncer struct {
	interval time.Duration
	fire     func()
	// Idle, if set, reports whether the consumer of firings is idle.
	Idle func() bool

	mu         sync.Mutex
	lastFire   time.Time
	lastChange time.Time
	scheduled  bool
	stopped    bool
	timer      *time.Timer
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
	now := time.Now()
	quiet := now.Sub(d.lastChange) >= d.interval/10
	d.lastChange = now
	if d.stopped || d.scheduled {
		d.mu.Unlock()
		return
	}
	if look, held := d.holds(now, quiet); held {
		d.scheduled = true
		d.timer = time.AfterFunc(look, d.trailing)
		d.mu.Unlock()
		return
	}
	d.lastFire = now
	d.mu.Unlock()
	d.fire()
}

// holds reports whether a firing due at now waits (inside the window, unless the
// changes were quiet for a tenth of it and the consumer is idle), and how long before
// it looks again.
func (d *Debouncer) holds(now time.Time, quiet bool) (time.Duration, bool) {
	wait := d.interval - now.Sub(d.lastFire)
	if wait <= 0 || quiet && d.Idle != nil && d.Idle() {
		return 0, false
	}
	return d.nextLook(now, wait), true
}

// nextLook is how long a held firing waits before it looks again: until the window's
// end (wait), or, when Idle can say the consumer is done, until the changes have been
// quiet for a tenth of the window (a tenth, when they are already), if that is sooner.
func (d *Debouncer) nextLook(now time.Time, wait time.Duration) time.Duration {
	if d.Idle == nil {
		return wait
	}
	tenth := d.interval / 10
	quietIn := tenth - now.Sub(d.lastChange)
	if quietIn <= 0 {
		quietIn = tenth
	}
	return min(wait, quietIn)
}

func (d *Debouncer) trailing() {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	now := time.Now()
	if look, held := d.holds(now, now.Sub(d.lastChange) >= d.interval/10); held {
		d.timer = time.AfterFunc(look, d.trailing) // (not quiet yet, or busy)
		d.mu.Unlock()
		return
	}
	d.scheduled = false
	d.lastFire = now
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
