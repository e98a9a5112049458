package events

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Event is one message on the bus. Implementations should be immutable values: the
// same Event is handed to every subscriber concurrently.
type Event interface {
	// Type names the kind of event; subscribers filter on it and the published
	// counter is labelled with it. Keep the set of types small and fixed.
	Type() string
	// Critical reports whether losing this event loses coordination work. A
	// dropped critical event signals the subscriber's Lost channel.
	Critical() bool
}

// Hooks receives the bus's counts. All methods must be safe for concurrent use and
// must not block; the metrics package provides an implementation. Hooks never see the
// events themselves, only their types.
type Hooks interface {
	// EventPublished is called once per Publish, whatever the number of subscribers.
	EventPublished(eventType string)
	// EventDropped is called once per subscriber whose buffer was full.
	EventDropped(subscriber, eventType string, critical bool)
	// SubscribersChanged is called with the number of subscriptions after each
	// Subscribe and Unsubscribe.
	SubscribersChanged(n int)
}

// Bus is an in-process publish/subscribe bus. The zero value is not usable; call
// NewBus.
type Bus struct {
	hooks Hooks

	mu     sync.Mutex                      // serialises Subscribe, Unsubscribe and Close
	subs   atomic.Pointer[[]*Subscription] // copy-on-write; read without locking by Publish
	closed bool
}

// NewBus returns an empty bus. hooks may be nil.
func NewBus(hooks Hooks) *Bus {
	b := &Bus{hooks: hooks}
	b.subs.Store(&[]*Subscription{})
	return b
}

// Subscribe registers a subscriber named name (used in the drop metrics and should be
// stable, e.g. "reconciler") with a buffer of the given size, receiving only events
// whose Type is in types, or every event when types is empty. A buffer below 1 or an
// empty name is a programming error and panics. Subscribing to a closed bus returns a
// subscription whose channel is already closed.
func (b *Bus) Subscribe(name string, buffer int, types ...string) *Subscription {
	if name == "" {
		panic("events: Subscribe with an empty subscriber name")
	}
	if buffer < 1 {
		panic(fmt.Sprintf("events: Subscribe(%q) with buffer %d; the buffer must be at least 1", name, buffer))
	}
	s := &Subscription{
		bus:  b,
		name: name,
		ch:   make(chan Event, buffer),
		lost: make(chan struct{}, 1),
	}
	if len(types) > 0 {
		s.types = make(map[string]struct{}, len(types))
		for _, t := range types {
			s.types[t] = struct{}{}
		}
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.closeLocked()
		return s
	}
	old := *b.subs.Load()
	next := append(slices.Clip(old), s)
	b.subs.Store(&next)
	if b.hooks != nil {
		b.hooks.SubscribersChanged(len(next))
	}
	return s
}

// Publish hands e to every matching subscriber without ever blocking. A subscriber
// whose buffer is full misses e; the drop is counted and, for a critical event, the
// subscriber's Lost channel is signalled. Publishing nil is a no-op. Publish is safe
// for concurrent use, including concurrently with Subscribe and Unsubscribe.
func (b *Bus) Publish(e Event) {
	if e == nil {
		return
	}
	typ, critical := e.Type(), e.Critical()
	if b.hooks != nil {
		b.hooks.EventPublished(typ)
	}
	for _, s := range *b.subs.Load() {
		if !s.wants(typ) {
			continue
		}
		if s.deliver(e, critical) {
			continue
		}
		if b.hooks != nil {
			b.hooks.EventDropped(s.name, typ, critical)
		}
	}
}

// Subscribers returns the number of current subscriptions.
func (b *Bus) Subscribers() int { return len(*b.subs.Load()) }

// Close unsubscribes every subscriber, closing their channels. Later Publish calls
// still count as published but reach nobody, and later subscriptions start closed.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for _, s := range *b.subs.Load() {
		s.mu.Lock()
		s.closeLocked()
		s.mu.Unlock()
	}
	b.subs.Store(&[]*Subscription{})
	if b.hooks != nil {
		b.hooks.SubscribersChanged(0)
	}
}

func (b *Bus) remove(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := *b.subs.Load()
	i := slices.Index(old, s)
	if i < 0 {
		return
	}
	next := slices.Delete(slices.Clone(old), i, i+1)
	b.subs.Store(&next)
	if b.hooks != nil {
		b.hooks.SubscribersChanged(len(next))
	}
}
