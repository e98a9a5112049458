package render

import (
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/open2b/scriggo/native"

	"github.com/haproxy-haptic/haptic/internal/note"
)

// noteKind and noteReason are what Kubernetes accepts as a kind and a condition
// reason: the template author writes them, a mistake stops the render.
var (
	noteKind   = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	noteReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
)

// maxNoteMessage bounds a note's message: it becomes a condition message (at most
// 32,768 bytes in Kubernetes) and may quote object text of any length.
const maxNoteMessage = 4096

// noteBook collects the notes of one render; templates run in parallel.
type noteBook struct {
	notes []note.Note
}

// note is the note(kind, namespace, name, section, reason, message) builtin: it
// records a typed note about an object for the controller (render.Result.Notes) and
// prints nothing; notes never reach the bundle.
func (e *Engine) note(env native.Env, kind, namespace, name, section, reason, message string) {
	if !noteKind.MatchString(kind) || name == "" || len(reason) > 1024 || !noteReason.MatchString(reason) {
		env.Stop(fmt.Errorf("note(%q, %q, %q, %q, %q, ...): want a kind such as \"Gateway\", a name, and a CamelCase reason", kind, namespace, name, section, reason))
		return
	}
	if len(message) > maxNoteMessage {
		cut := maxNoteMessage
		for cut > 0 && !utf8.RuneStart(message[cut]) {
			cut--
		}
		message = message[:cut] + "…"
	}
	n := note.Note{Kind: kind, Namespace: namespace, Name: name, Section: section, Reason: reason, Message: message}
	st := e.st
	st.mu.Lock()
	st.notes.notes = append(st.notes.notes, n)
	st.mu.Unlock()
	if st.rec != nil { // a reused fragment makes its notes again (replay)
		d := &st.rec.top().deps
		d.notes = append(d.notes, n)
	}
}

// sorted returns the render's notes in their fixed order, without duplicates.
func (b *noteBook) sorted() []note.Note {
	return note.Sorted(b.notes)
}
