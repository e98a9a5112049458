package note

import (
	"cmp"
	"slices"
)

// Note is one statement a template makes about an object it read.
type Note struct {
	// Kind is the object's kind, e.g. "Gateway".
	Kind string `json:"kind"`
	// Namespace and Name name the object (Namespace is empty for cluster objects).
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Section is the part of the object the note is about, as Gateway API's
	// sectionName: a Gateway listener's name. Empty: the whole object.
	Section string `json:"section,omitempty"`
	// Reason is a condition reason, e.g. "PortUnavailable" (CamelCase, as
	// Kubernetes condition reasons are).
	Reason string `json:"reason"`
	// Message says why, for people.
	Message string `json:"message,omitempty"`
}

// String is the note as one line: "<kind> <namespace>/<name> [<section>] <reason>: <message>".
func (n Note) String() string {
	s := n.Kind + " " + n.Ref()
	if n.Section != "" {
		s += " [" + n.Section + "]"
	}
	return s + " " + n.Reason + ": " + n.Message
}

// Ref is "<namespace>/<name>", or the name of a cluster object.
func (n Note) Ref() string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "/" + n.Name
}

func compare(a, b Note) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.Section, b.Section), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Message, b.Message))
}

// Sorted returns notes in a fixed order (kind, namespace, name, section, reason,
// message) without duplicates, whatever order templates running in parallel wrote
// them in. The input is not modified.
func Sorted(notes []Note) []Note {
	if len(notes) == 0 {
		return nil
	}
	out := slices.Clone(notes)
	slices.SortFunc(out, compare)
	return slices.Compact(out)
}

// Lines returns the notes' String forms, one per note.
func Lines(notes []Note) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.String()
	}
	return out
}
