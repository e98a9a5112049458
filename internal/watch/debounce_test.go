package watch

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestDebouncerLeadingEdge(t *testing.T) {
	var fired atomic.Int32
	d := NewDebouncer(200*time.Millisecond, func() { fired.Add(1) })
	defer d.Stop()
	d.Trigger()
	if fired.Load() != 1 {
		t.Fatalf("an isolated change must fire at once, fired %d", fired.Load())
	}
	for range 100 {
		d.Trigger()
	}
	if fired.Load() != 1 {
		t.Fatalf("changes inside the window must wait, fired %d", fired.Load())
	}
	deadline := time.Now().Add(2 * time.Second)
	for fired.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if fired.Load() != 2 {
		t.Fatalf("the burst must fire once at the window's end, fired %d", fired.Load())
	}
}

func TestDebouncerZeroFiresEveryChange(t *testing.T) {
	var fired atomic.Int32
	d := NewDebouncer(0, func() { fired.Add(1) })
	for range 10 {
		d.Trigger()
	}
	if fired.Load() != 10 {
		t.Fatalf("fired %d, want 10", fired.Load())
	}
}

func TestDebouncerStopCancelsPending(t *testing.T) {
	var fired atomic.Int32
	d := NewDebouncer(50*time.Millisecond, func() { fired.Add(1) })
	d.Trigger()
	d.Trigger()
	d.Stop()
	time.Sleep(120 * time.Millisecond)
	if fired.Load() != 1 {
		t.Fatalf("fired %d after stop, want 1", fired.Load())
	}
}

// A change after the last firing's work is done, and a tenth of the window after the
// previous change, fires at once; changes while the consumer is busy, or in a burst,
// are batched to the window's end.
func TestDebouncerFiresAtOnceWhenIdle(t *testing.T) {
	var fired atomic.Int32
	var busy atomic.Bool
	d := NewDebouncer(time.Hour, func() { fired.Add(1); busy.Store(true) })
	d.Idle = func() bool { return !busy.Load() }
	defer d.Stop()
	d.Trigger()
	time.Sleep(time.Millisecond)
	d.lastChange = time.Time{} // as if the window's tenth had passed
	d.Trigger()
	if fired.Load() != 1 {
		t.Fatalf("a change while busy must wait for the window, fired %d", fired.Load())
	}

	fired.Store(0)
	idle := NewDebouncer(200*time.Millisecond, func() { fired.Add(1) })
	idle.Idle = func() bool { return true }
	defer idle.Stop()
	for range 3 {
		idle.Trigger()
		time.Sleep(30 * time.Millisecond) // more than a tenth of the window
	}
	if fired.Load() != 3 {
		t.Fatalf("spaced changes while idle must fire at once, fired %d, want 3", fired.Load())
	}
	idle.Trigger()
	idle.Trigger() // a burst: at the window's end
	if fired.Load() != 4 {
		t.Fatalf("a change right after another must wait for the window, fired %d, want 4", fired.Load())
	}
}

// A change that comes right after another, or while the consumer is busy, fires as
// soon as the changes have been quiet for a tenth of the window and the consumer is
// idle, not at the window's end; a burst that goes on still fires at the window's end.
func TestDebouncerFiresWhenQuietAgain(t *testing.T) {
	var fired atomic.Int32
	var busy atomic.Bool
	d := NewDebouncer(time.Second, func() { fired.Add(1) })
	d.Idle = func() bool { return !busy.Load() }
	defer d.Stop()
	waitFired := func(n int32, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for fired.Load() < n && time.Since(start) < within {
			time.Sleep(2 * time.Millisecond)
		}
		if fired.Load() != n {
			t.Fatalf("fired %d within %s, want %d", fired.Load(), within, n)
		}
		return time.Since(start)
	}
	d.Trigger() // fires at once
	d.Trigger() // right after it: when quiet again (a tenth, 100 ms), not at the window's end
	if took := waitFired(2, 600*time.Millisecond); took < 50*time.Millisecond {
		t.Fatalf("a change right after another fired after %s, before the changes were quiet", took)
	}

	busy.Store(true)
	time.Sleep(150 * time.Millisecond)
	d.Trigger() // quiet, but the consumer is busy
	time.Sleep(150 * time.Millisecond)
	if fired.Load() != 2 {
		t.Fatalf("a change while busy fired, fired %d", fired.Load())
	}
	busy.Store(false)
	waitFired(3, 400*time.Millisecond) // (the window of the last firing ends 1 s after it)

	// changes every 20 ms for 1.5 s: never a tenth quiet, so the window's end
	start := time.Now()
	for time.Since(start) < 1500*time.Millisecond {
		d.Trigger()
		time.Sleep(20 * time.Millisecond)
	}
	if n := fired.Load(); n < 4 || n > 6 {
		t.Fatalf("a burst of 1.5 s fired %d times, want one at its start and one per window (4–6 in all)", n)
	}
}
