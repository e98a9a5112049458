package events

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type testEvent struct {
	typ      string
	critical bool
	seq      int
}

func (e testEvent) Type() string   { return e.typ }
func (e testEvent) Critical() bool { return e.critical }

// countingHooks records what the bus reports.
type countingHooks struct {
	mu              sync.Mutex
	published       map[string]int
	dropped         int
	droppedCritical int
	bySubscriber    map[string]int
	subscribers     int
}

func newCountingHooks() *countingHooks {
	return &countingHooks{published: map[string]int{}, bySubscriber: map[string]int{}}
}

func (h *countingHooks) EventPublished(t string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.published[t]++
}

func (h *countingHooks) EventDropped(sub, _ string, critical bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropped++
	h.bySubscriber[sub]++
	if critical {
		h.droppedCritical++
	}
}

func (h *countingHooks) SubscribersChanged(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subscribers = n
}

func TestPublishDeliversToMatchingSubscribers(t *testing.T) {
	h := newCountingHooks()
	b := NewBus(h)
	all := b.Subscribe("all", 4)
	onlyA := b.Subscribe("only-a", 4, "a")
	if h.subscribers != 2 || b.Subscribers() != 2 {
		t.Fatalf("subscribers: hooks %d, bus %d; want 2", h.subscribers, b.Subscribers())
	}

	b.Publish(testEvent{typ: "a"})
	b.Publish(testEvent{typ: "b"})
	b.Publish(nil)

	if got := len(all.C()); got != 2 {
		t.Errorf("all received %d events, want 2", got)
	}
	if got := len(onlyA.C()); got != 1 {
		t.Fatalf("only-a received %d events, want 1", got)
	}
	if e := <-onlyA.C(); e.Type() != "a" {
		t.Errorf("only-a got type %q", e.Type())
	}
	if h.published["a"] != 1 || h.published["b"] != 1 || h.dropped != 0 {
		t.Errorf("hooks: published %v dropped %d", h.published, h.dropped)
	}
}

func TestFullBufferDropsWithoutBlockingAndCountsExactly(t *testing.T) {
	h := newCountingHooks()
	b := NewBus(h)
	slow := b.Subscribe("slow", 3)
	fast := b.Subscribe("fast", 100)

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 10 {
			b.Publish(testEvent{typ: "change", seq: i})
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a full subscriber buffer")
	}

	if got := slow.Dropped(); got != 7 {
		t.Errorf("slow dropped %d, want 7", got)
	}
	if got := slow.DroppedCritical(); got != 0 {
		t.Errorf("slow dropped %d critical, want 0", got)
	}
	if got := fast.Dropped(); got != 0 {
		t.Errorf("fast dropped %d, want 0", got)
	}
	if h.published["change"] != 10 || h.dropped != 7 || h.bySubscriber["slow"] != 7 || h.bySubscriber["fast"] != 0 || h.droppedCritical != 0 {
		t.Errorf("hooks: published %v dropped %d by subscriber %v critical %d", h.published, h.dropped, h.bySubscriber, h.droppedCritical)
	}
	// The buffer holds the first three, in order.
	for want := range 3 {
		if e := (<-slow.C()).(testEvent); e.seq != want {
			t.Errorf("slow got seq %d, want %d", e.seq, want)
		}
	}
	select {
	case <-slow.Lost():
		t.Error("Lost signalled for non-critical drops")
	default:
	}
}

func TestCriticalDropSignalsLost(t *testing.T) {
	h := newCountingHooks()
	b := NewBus(h)
	s := b.Subscribe("reconciler", 1)

	b.Publish(testEvent{typ: "change"}) // fills the buffer
	select {
	case <-s.Lost():
		t.Fatal("Lost signalled before any drop")
	default:
	}
	b.Publish(testEvent{typ: "sync", critical: true}) // dropped
	b.Publish(testEvent{typ: "sync", critical: true}) // dropped; the signal coalesces

	select {
	case <-s.Lost():
	default:
		t.Fatal("Lost not signalled after a critical drop")
	}
	select {
	case <-s.Lost():
		t.Fatal("second Lost signal pending; signals should coalesce")
	default:
	}
	if s.DroppedCritical() != 2 || s.Dropped() != 2 {
		t.Errorf("dropped %d (critical %d), want 2 (2)", s.Dropped(), s.DroppedCritical())
	}
	if h.droppedCritical != 2 || h.dropped != 2 {
		t.Errorf("hooks dropped %d critical %d, want 2 and 2", h.dropped, h.droppedCritical)
	}

	// After draining, a new critical drop signals again.
	<-s.C()
	b.Publish(testEvent{typ: "change"})
	b.Publish(testEvent{typ: "sync", critical: true})
	select {
	case <-s.Lost():
	default:
		t.Fatal("Lost not re-signalled after a later critical drop")
	}
}

func TestCriticalDropOnlyAffectsTheFullSubscriber(t *testing.T) {
	b := NewBus(nil)
	full := b.Subscribe("full", 1)
	roomy := b.Subscribe("roomy", 8)
	b.Publish(testEvent{typ: "x"})
	b.Publish(testEvent{typ: "x", critical: true})
	select {
	case <-full.Lost():
	default:
		t.Error("full subscriber not signalled")
	}
	select {
	case <-roomy.Lost():
		t.Error("roomy subscriber signalled")
	default:
	}
	if len(roomy.C()) != 2 {
		t.Errorf("roomy has %d events, want 2", len(roomy.C()))
	}
}

func TestUnsubscribeClosesChannelAndStopsDelivery(t *testing.T) {
	h := newCountingHooks()
	b := NewBus(h)
	s := b.Subscribe("gone", 2)
	b.Publish(testEvent{typ: "x"})
	s.Unsubscribe()
	s.Unsubscribe() // idempotent
	b.Publish(testEvent{typ: "x"})

	if h.subscribers != 0 || b.Subscribers() != 0 {
		t.Errorf("subscribers after Unsubscribe: hooks %d bus %d", h.subscribers, b.Subscribers())
	}
	n := 0
	for range s.C() {
		n++
	}
	if n != 1 {
		t.Errorf("drained %d events after Unsubscribe, want the 1 buffered before", n)
	}
	if h.dropped != 0 {
		t.Errorf("publishing after Unsubscribe counted %d drops", h.dropped)
	}
}

func TestCloseClosesAllAndLaterSubscriptionsStartClosed(t *testing.T) {
	b := NewBus(nil)
	s1 := b.Subscribe("one", 1)
	s2 := b.Subscribe("two", 1)
	b.Close()
	b.Close()
	for _, s := range []*Subscription{s1, s2, b.Subscribe("late", 1)} {
		if _, ok := <-s.C(); ok {
			t.Errorf("%s: channel not closed", s.Name())
		}
	}
	b.Publish(testEvent{typ: "x"}) // must not panic
}

func TestSubscribeRejectsBadArguments(t *testing.T) {
	b := NewBus(nil)
	for name, f := range map[string]func(){
		"empty name":  func() { b.Subscribe("", 1) },
		"zero buffer": func() { b.Subscribe("x", 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestConcurrentPublishersAndSubscribers runs under -race: publishers, consumers that
// come and go, and a slow consumer, with an exact accounting at the end.
func TestConcurrentPublishersAndSubscribers(t *testing.T) {
	h := newCountingHooks()
	b := NewBus(h)

	const publishers, perPublisher = 8, 500
	stable := b.Subscribe("stable", publishers*perPublisher) // never drops
	slow := b.Subscribe("slow", 1)                           // drops almost everything

	var received atomic.Int64
	stop := make(chan struct{})
	var churn sync.WaitGroup
	for i := range 4 {
		churn.Add(1)
		go func() {
			defer churn.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := b.Subscribe(fmt.Sprintf("churn-%d", i), 4)
				for range 3 {
					select {
					case <-s.C():
						received.Add(1)
					case <-s.Lost():
					case <-time.After(time.Millisecond):
					}
				}
				s.Unsubscribe()
				for range s.C() { // drains and ends because C is closed
				}
			}
		}()
	}

	var pubs sync.WaitGroup
	for p := range publishers {
		pubs.Add(1)
		go func() {
			defer pubs.Done()
			for i := range perPublisher {
				b.Publish(testEvent{typ: "t", critical: i%10 == 0, seq: p*perPublisher + i})
			}
		}()
	}
	pubs.Wait()
	close(stop)
	churn.Wait()

	if got := len(stable.C()); got != publishers*perPublisher {
		t.Errorf("stable received %d, want %d", got, publishers*perPublisher)
	}
	if stable.Dropped() != 0 {
		t.Errorf("stable dropped %d", stable.Dropped())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.published["t"] != publishers*perPublisher {
		t.Errorf("published %d, want %d", h.published["t"], publishers*perPublisher)
	}
	if got, want := uint64(h.bySubscriber["slow"]), slow.Dropped(); got != want {
		t.Errorf("hooks counted %d drops for slow, subscription counted %d", got, want)
	}
	if slow.Dropped() != publishers*perPublisher-1 {
		t.Errorf("slow dropped %d, want %d", slow.Dropped(), publishers*perPublisher-1)
	}
	if slow.DroppedCritical() == 0 {
		t.Error("slow dropped no critical events")
	}
	select {
	case <-slow.Lost():
	default:
		t.Error("slow not signalled")
	}
	total := 0
	for _, n := range h.bySubscriber {
		total += n
	}
	if total != h.dropped {
		t.Errorf("per-subscriber drops sum to %d, total %d", total, h.dropped)
	}
	if h.subscribers != 2 {
		t.Errorf("subscribers at the end: %d, want 2", h.subscribers)
	}
}
