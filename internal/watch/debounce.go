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
// in the last tenth of the window. Batching exists to spare renders in a burst, whose
// changes come close together; a change that follows the last one's finished work
// would otherwise wait out the window for nothing (a route applied after the previous
// route served waited up to 100 ms).
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
	if wait := d.interval - now.Sub(d.lastFire); wait > 0 && !(quiet && d.Idle != nil && d.Idle()) {
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
