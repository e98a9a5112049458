package controller

// Event types on the bus.
const (
	EventResourceChanged = "resource.changed"
	EventPodsChanged     = "pods.changed"
	EventReconciled      = "reconcile.completed"
)

// resourceChanged says a watched resource's store changed (after debouncing). It is
// critical: losing it would leave the cluster's change unrendered.
type resourceChanged struct{ resource string }

func (resourceChanged) Type() string   { return EventResourceChanged }
func (resourceChanged) Critical() bool { return true }

// podsChanged says the set of HAProxy pods changed.
type podsChanged struct{ count int }

func (podsChanged) Type() string   { return EventPodsChanged }
func (podsChanged) Critical() bool { return false }

// reconciled reports the outcome of a reconcile, for observers.
type reconciled struct {
	hash string
	err  error
}

func (reconciled) Type() string   { return EventReconciled }
func (reconciled) Critical() bool { return false }
