package events

import (
	"sync"
	"sync/atomic"
)

// Subscription is one subscriber's view of a Bus.
type Subscription struct {
	bus   *Bus
	name  string
	types map[string]struct{} // nil: every type

	mu     sync.RWMutex // read-held while sending, write-held while closing ch
	closed bool
	ch     chan Event
	lost   chan struct{} // capacity 1; a pending signal coalesces later ones

	dropped         atomic.Uint64
	droppedCritical atomic.Uint64
}

// Name is the subscriber name given to Subscribe.
func (s *Subscription) Name() string { return s.name }

// C is the channel the subscriber receives events on. It is closed by Unsubscribe
// and by Bus.Close.
func (s *Subscription) C() <-chan Event { return s.ch }

// Lost receives a value when a critical event addressed to this subscriber was
// dropped because its buffer was full. Signals coalesce: one pending value stands for
// any number of critical drops since the consumer last received from Lost. On
// receiving it the consumer must restart its iteration from the authoritative state;
// events still buffered in C remain valid and may be drained as usual. Lost is never
// closed.
func (s *Subscription) Lost() <-chan struct{} { return s.lost }

// Dropped returns how many events, critical or not, this subscriber has missed.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// DroppedCritical returns how many critical events this subscriber has missed.
func (s *Subscription) DroppedCritical() uint64 { return s.droppedCritical.Load() }

// Unsubscribe removes the subscription from its bus and closes C. Events already
// buffered stay readable. It is safe to call more than once and concurrently with
// Publish.
func (s *Subscription) Unsubscribe() {
	s.bus.remove(s)
	s.mu.Lock()
	s.closeLocked()
	s.mu.Unlock()
}

func (s *Subscription) closeLocked() {
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}

func (s *Subscription) wants(typ string) bool {
	if s.types == nil {
		return true
	}
	_, ok := s.types[typ]
	return ok
}

// deliver sends e without blocking. It reports false when e was dropped because the
// buffer was full; an event for an already-closed subscription is neither delivered
// nor counted as dropped.
func (s *Subscription) deliver(e Event, critical bool) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return true
	}
	select {
	case s.ch <- e:
		return true
	default:
	}
	s.dropped.Add(1)
	if critical {
		s.droppedCritical.Add(1)
		select {
		case s.lost <- struct{}{}:
		default: // a signal is already pending
		}
	}
	return false
}
