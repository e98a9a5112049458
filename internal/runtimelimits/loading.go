package runtimelimits

import (
	"os"
	"runtime/debug"
	"sync"
)

// loadingGCPercent is the collector's target while the controller loads its
// objects. An informer's initial list decodes every object whole (managed fields
// and all) before the controller keeps its part: the garbage is several times
// what stays, and with the default target (100) the heap grows to twice the live
// heap of the load's last moments, the first render's working set on top. The
// runtime keeps those pages for as long as its goal covers them: the resident set
// stayed at the load's peak (about 200 MiB at 5,000 Ingresses with their Services
// and EndpointSlices, 64 MiB live). At 50 the load collects twice as often, for a
// few hundred milliseconds more at that size.
const loadingGCPercent = 50

var loading struct {
	sync.Mutex
	count   int // loads under way
	percent int // the target before the first of them
}

// Loading lowers the collector's target while the controller loads its watched
// objects, until the returned done is called (by every concurrent load; done is
// idempotent). The last done restores the target and collects, returning the
// load's garbage to the system (a collection: run it aside). A GOGC set in the
// environment is the user's choice and is left alone.
func Loading() (done func()) {
	return loadingWith(os.LookupEnv, debug.SetGCPercent, debug.FreeOSMemory)
}

func loadingWith(lookup func(string) (string, bool), setPercent func(int) int, free func()) func() {
	if _, set := lookup("GOGC"); set {
		return func() {}
	}
	loading.Lock()
	if loading.count == 0 {
		loading.percent = setPercent(loadingGCPercent)
	}
	loading.count++
	loading.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			loading.Lock()
			loading.count--
			last := loading.count == 0
			if last {
				setPercent(loading.percent)
			}
			loading.Unlock()
			if last {
				free()
			}
		})
	}
}
