package runtimelimits

import "testing"

func TestLoadingLowersTheTargetUntilTheLastLoadIsDone(t *testing.T) {
	percent, frees := 100, 0
	set := func(p int) int { old := percent; percent = p; return old }
	free := func() { frees++ }
	first := loadingWith(env(), set, free)
	second := loadingWith(env(), set, free)
	if percent != loadingGCPercent {
		t.Fatalf("target while loading: %d, want %d", percent, loadingGCPercent)
	}
	first()
	first() // idempotent: the second load is still under way
	if percent != loadingGCPercent || frees != 0 {
		t.Fatalf("one of two loads done: target %d, %d collections; want %d, 0", percent, frees, loadingGCPercent)
	}
	second()
	if percent != 100 || frees != 1 {
		t.Fatalf("both loads done: target %d, %d collections; want 100, 1", percent, frees)
	}
}

func TestLoadingLeavesAnExplicitGOGC(t *testing.T) {
	percent, frees := 200, 0
	done := loadingWith(env("GOGC", "200"), func(p int) int { old := percent; percent = p; return old }, func() { frees++ })
	if percent != 200 {
		t.Fatalf("target with GOGC=200 set: %d", percent)
	}
	done()
	if percent != 200 || frees != 0 {
		t.Fatalf("after the load: target %d, %d collections; want 200, 0", percent, frees)
	}
}
