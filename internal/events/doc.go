// Package events is the controller's in-process event bus.
//
// A Bus fans each published Event out to its subscribers. Every Subscription owns a
// buffered channel whose size is fixed when it subscribes, and Publish never blocks:
// when a subscriber's buffer is full the event is dropped for that subscriber alone and
// the drop is counted (Hooks, typically the metrics package, turns the counts into
// haptic_events_published_total, haptic_events_dropped_total,
// haptic_events_dropped_critical_total and haptic_events_dropped_by_subscriber_total).
//
// A dropped event flagged Critical is not silently lost: the Subscription's Lost channel
// is signalled, and the consumer is expected to abandon what it was doing and restart
// its iteration from the authoritative state (the stores) rather than from the event
// stream. The bus therefore never has to guarantee delivery; it guarantees that a
// consumer learns when delivery of something that mattered failed.
package events
