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
