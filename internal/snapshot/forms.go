package snapshot

import "sync/atomic"

// Forms holds what readers derived from one admitted version of an object — compact
// forms of Raw that Go helpers read on every render instead of walking its maps —
// shared by every copy of the Object (a store made With a change keeps the others'
// forms). A form must be a function of Raw alone; Raw never changes after
// admission, so a form never goes stale. Safe for concurrent renders: two that make
// the same form at once both keep a correct one.
type Forms struct {
	head atomic.Pointer[formEntry]
	// first is the first form put, in the same allocation: an object mostly has one
	// form, and a render reads one per object (one cache miss fewer).
	first   formEntry
	claimed atomic.Bool
}

type formEntry struct {
	kind  any
	value any
	next  *formEntry
}

// Get returns the form of kind, if one was put.
func (f *Forms) Get(kind any) (any, bool) {
	for e := f.head.Load(); e != nil; e = e.next {
		if e.kind == kind {
			return e.value, true
		}
	}
	return nil, false
}

// Put keeps value as the form of kind (an object has a handful of kinds at most:
// a list is enough).
func (f *Forms) Put(kind, value any) {
	e := &f.first
	if !f.claimed.CompareAndSwap(false, true) {
		e = &formEntry{}
	}
	e.kind, e.value = kind, value
	for {
		head := f.head.Load()
		e.next = head
		if f.head.CompareAndSwap(head, e) {
			return
		}
	}
}
