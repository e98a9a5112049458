package render

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Values computed apart from the template: a Go helper that computes many
// independent values (the libraries' runs of routes: gateway_route_runs,
// ingress_fragments) spreads them over the machine's cores. Each is computed with a
// reader of its own, which records its reads in deps of its own; the helper then
// takes them in order on the template's goroutine and memoizes them
// (Engine.memoize), as cached and end_cached around each would have. A panic (a
// store error, a writer's refusal that stops the render) is raised again where its
// value is taken, so a render fails as it would have failed computing them one by
// one. Template code cannot run apart: the store functions it calls record into the
// engine's one recorder (Engine.recordInto lends that to a value computed apart).

// apartValue is a value computed apart, with what it read.
type apartValue[T any] struct {
	value    T
	deps     *deps // nil when the render is not recording
	recent   recentReads
	panicked any
}

// take returns the value, or raises its computation's panic again.
func (a *apartValue[T]) take() T {
	if a.panicked != nil {
		panic(a.panicked)
	}
	return a.value
}

// computeApart computes fn(i) for i in [0, n) apart, each with a reader of its own.
// fn must read the stores through its reader only and write nothing shared.
func computeApart[T any](st *renderState, n int, fn func(i int, rd reader) T) []apartValue[T] {
	out := make([]apartValue[T], n)
	panics := eachApart(n, func(i int) {
		a := &out[i]
		rd := reader{st: st, recent: &a.recent}
		if st.rec != nil {
			a.deps = &deps{}
			rd.deps = a.deps
		}
		a.value = fn(i, rd)
	})
	for i, p := range panics {
		out[i].panicked = p
	}
	return out
}

// eachApart calls fn(i) for i in [0, n) on up to GOMAXPROCS goroutines and returns
// what each call panicked with (nil: it returned).
func eachApart(n int, fn func(i int)) []any {
	panics := make([]any, n)
	call := func(i int) {
		defer func() { panics[i] = recover() }()
		fn(i)
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			call(i)
		}
		return panics
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				call(i)
			}
		})
	}
	wg.Wait()
	return panics
}

// eachHereOrApart calls fn(i) for i in [0, n): on every core when apart (eachApart),
// on this goroutine otherwise. A panic of fn is raised again here either way.
func eachHereOrApart(apart bool, n int, fn func(i int)) {
	if !apart {
		for i := range n {
			fn(i)
		}
		return
	}
	for _, p := range eachApart(n, fn) {
		if p != nil {
			panic(p)
		}
	}
}
