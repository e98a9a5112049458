package controller

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestConfigStatusWritesCoalesce: the status writes that follow renders run one
// at a time and at most one per interval, and the last render's write is the last
// one written: 50 renders in a burst cost two writes, not 50.
func TestConfigStatusWritesCoalesce(t *testing.T) {
	cs := &configStatus{interval: 300 * time.Millisecond}
	var mu sync.Mutex
	var wrote []int
	var at []time.Time
	for i := range 50 {
		cs.afterDelivery(context.Background(), func(context.Context) {
			mu.Lock()
			defer mu.Unlock()
			wrote, at = append(wrote, i), append(at, time.Now())
		})
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(3 * cs.interval)
	mu.Lock()
	defer mu.Unlock()
	if len(wrote) == 0 || wrote[len(wrote)-1] != 49 {
		t.Fatalf("writes %v: the last render's write did not run last", wrote)
	}
	if len(wrote) > 2 {
		t.Fatalf("%d writes for a burst of 50 within one interval: %v", len(wrote), wrote)
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < cs.interval-10*time.Millisecond {
			t.Fatalf("writes %v apart, interval %v", gap, cs.interval)
		}
	}
}
