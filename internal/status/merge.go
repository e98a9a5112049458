package status

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// MergeConditions gives each desired condition its lastTransitionTime: the current
// one when a condition of that type had the same status, now otherwise.
func MergeConditions(desired, current []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, len(desired))
	for i, d := range desired {
		d.LastTransitionTime = now
		for _, c := range current {
			if c.Type == d.Type && c.Status == d.Status && !c.LastTransitionTime.IsZero() {
				d.LastTransitionTime = c.LastTransitionTime
				break
			}
		}
		out[i] = d
	}
	return out
}

// MergeGatewayClass returns desired with transition times taken from current.
func MergeGatewayClass(desired, current gwv1.GatewayClassStatus, now metav1.Time) gwv1.GatewayClassStatus {
	desired.Conditions = MergeConditions(desired.Conditions, current.Conditions, now)
	if desired.SupportedFeatures == nil {
		desired.SupportedFeatures = current.SupportedFeatures
	}
	return desired
}

// MergeGateway returns desired with transition times taken from current.
func MergeGateway(desired, current gwv1.GatewayStatus, now metav1.Time) gwv1.GatewayStatus {
	desired.Conditions = MergeConditions(desired.Conditions, current.Conditions, now)
	desired.Listeners = mergeListeners(desired.Listeners, current.Listeners, now,
		func(l *gwv1.ListenerStatus) (gwv1.SectionName, *[]metav1.Condition) { return l.Name, &l.Conditions })
	return desired
}

// mergeListeners returns desired's listeners, each with transition times taken from
// current's listener of the same name; fields names a listener status's name and
// conditions (Gateways and ListenerSets have listener status types of their own).
func mergeListeners[L any](desired, current []L, now metav1.Time, fields func(*L) (gwv1.SectionName, *[]metav1.Condition)) []L {
	out := make([]L, len(desired))
	for i := range desired {
		out[i] = desired[i]
		name, conds := fields(&out[i])
		var cur []metav1.Condition
		for j := range current {
			if n, c := fields(&current[j]); n == name {
				cur = *c
				break
			}
		}
		*conds = MergeConditions(*conds, cur, now)
	}
	return out
}

// MergeRoute returns desired with transition times of our parents' conditions taken
// from current (entries of other controllers are already current's own).
func MergeRoute(desired, current gwv1.RouteStatus, now metav1.Time) gwv1.RouteStatus {
	ps := make([]gwv1.RouteParentStatus, len(desired.Parents))
	for i, p := range desired.Parents {
		for _, c := range current.Parents {
			if c.ControllerName == p.ControllerName && equalParentRef(&c.ParentRef, &p.ParentRef) {
				p.Conditions = MergeConditions(p.Conditions, c.Conditions, now)
				break
			}
		}
		for j := range p.Conditions {
			if p.Conditions[j].LastTransitionTime.IsZero() {
				p.Conditions[j].LastTransitionTime = now
			}
		}
		ps[i] = p
	}
	desired.Parents = ps
	return desired
}

// Equal reports whether two statuses are semantically equal (nil and empty lists
// are equal; times compare as instants).
func Equal(a, b any) bool { return equality.Semantic.DeepEqual(a, b) }

// EqualRoute is Equal for route statuses, field by field: a status pass compares
// every route's, and the reflective walk was half of the pass at thousands of routes.
func EqualRoute(a, b gwv1.RouteStatus) bool {
	if len(a.Parents) != len(b.Parents) {
		return false
	}
	for i := range a.Parents {
		pa, pb := &a.Parents[i], &b.Parents[i]
		if pa.ControllerName != pb.ControllerName || !equalParentRef(&pa.ParentRef, &pb.ParentRef) ||
			!equalConditions(pa.Conditions, pb.Conditions) {
			return false
		}
	}
	return true
}

func equalParentRef(a, b *gwv1.ParentReference) bool {
	return a.Name == b.Name && samePointee(a.Group, b.Group) && samePointee(a.Kind, b.Kind) &&
		samePointee(a.Namespace, b.Namespace) && samePointee(a.SectionName, b.SectionName) && samePointee(a.Port, b.Port)
}

// samePointee: both nil, or both pointing to equal values.
func samePointee[T comparable](a, b *T) bool {
	return a == b || a != nil && b != nil && *a == *b
}

// equalConditions compares conditions as Equal does (transition times as instants).
func equalConditions(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Type != y.Type || x.Status != y.Status || x.ObservedGeneration != y.ObservedGeneration || x.Reason != y.Reason ||
			x.Message != y.Message || !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	return true
}

// MergeListenerSet returns desired with transition times taken from current.
func MergeListenerSet(desired, current gwv1.ListenerSetStatus, now metav1.Time) gwv1.ListenerSetStatus {
	desired.Conditions = MergeConditions(desired.Conditions, current.Conditions, now)
	desired.Listeners = mergeListeners(desired.Listeners, current.Listeners, now,
		func(l *gwv1.ListenerEntryStatus) (gwv1.SectionName, *[]metav1.Condition) {
			return l.Name, &l.Conditions
		})
	return desired
}
