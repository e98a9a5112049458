package render

import (
	"bytes"
	"sort"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// heldPiece is the size from which a string the template writes is held, not copied.
const heldPiece = 32 << 10

// heldUnit is the size from which a reused unit's output is held, not copied.
const heldUnit = 512

// output is what a top-level template writes, held as parts: the text written
// directly, copied into one buffer, and strings held as they are — a reused unit's
// output (writeHeld) and any large string (a map text the library keeps). A render
// after a change writes most of a large haproxy.cfg as reused units: it is only
// copied into one string when it differs from the last render's (sameAs), and
// equal outputs are found by comparing the held strings at their pointers. The
// buffer grows to the size it is given (the likely size of the text written
// directly) at the first text that is not white space, and by doubling after that
// (Grow before each write: an append grows a large buffer by a quarter at a time).
type output struct {
	lit     strings.Builder // the text written directly
	parts   []outPart       // held strings and the text written before each, in order
	litFrom int             // where in lit the text after the last part starts
	n       int             // the length of everything written
	held    int             // how many parts are held strings
	blank   bool            // lit holds only white space
	sizeTo  int             // the size lit grows to for the first text that is not white space
}

// outPart is a held string, or the text lit[from:to]; at is where it starts in
// everything written.
type outPart struct {
	held     string
	from, to int
	at       int
}

func newOutput(size int) *output {
	if size > 0 {
		size += size/32 + 1024
	}
	return &output{blank: true, sizeTo: size}
}

func (o *output) WriteString(s string) (int, error) {
	if len(s) >= heldPiece {
		o.hold(s)
		return len(s), nil
	}
	if o.blank && strings.TrimSpace(s) != "" {
		o.notBlank()
	}
	o.lit.Grow(len(s))
	o.n += len(s)
	return o.lit.WriteString(s)
}

func (o *output) Write(p []byte) (int, error) {
	if o.blank && len(bytes.TrimSpace(p)) > 0 {
		o.notBlank()
	}
	o.lit.Grow(len(p))
	o.n += len(p)
	return o.lit.Write(p)
}

// writeHeld writes s, held when it is large enough to cost more to copy than to hold.
func (o *output) writeHeld(s string) {
	if len(s) < heldUnit {
		o.WriteString(s)
		return
	}
	o.hold(s)
}

func (o *output) hold(s string) {
	if o.lit.Len() > o.litFrom {
		o.parts = append(o.parts, outPart{from: o.litFrom, to: o.lit.Len(), at: o.n - (o.lit.Len() - o.litFrom)})
		o.litFrom = o.lit.Len()
	}
	o.parts = append(o.parts, outPart{held: s, at: o.n})
	o.n += len(s)
	o.held++
}

// notBlank is the first write of more than white space: the buffer grows to the
// likely size of the text written directly.
func (o *output) notBlank() {
	o.blank = false
	if o.lit.Cap() < o.sizeTo {
		o.lit.Grow(o.sizeTo - o.lit.Len())
	}
}

func (o *output) Len() int { return o.n }

// litLen is the length of the text written directly: the size to give the output
// of the next render of the file.
func (o *output) litLen() int { return o.lit.Len() }

// String is everything written so far: without held strings, the buffer itself.
func (o *output) String() string {
	if len(o.parts) == 0 {
		return o.lit.String()
	}
	return o.from(0)
}

// from is a copy of everything written from at on (a unit's output, which its memo
// keeps without the rest).
func (o *output) from(at int) string {
	lit := o.lit.String()
	tail := o.n - (len(lit) - o.litFrom) // where the text after the last part starts
	if at >= tail {
		return strings.Clone(lit[o.litFrom+(at-tail):])
	}
	var b strings.Builder
	b.Grow(o.n - at)
	i := sort.Search(len(o.parts), func(i int) bool { return o.parts[i].at+o.parts[i].len() > at })
	for ; i < len(o.parts); i++ {
		p := o.parts[i]
		text := p.held
		if text == "" {
			text = lit[p.from:p.to]
		}
		b.WriteString(text[max(0, at-p.at):])
	}
	b.WriteString(lit[o.litFrom:])
	return b.String()
}

func (p outPart) len() int {
	if p.held != "" {
		return len(p.held)
	}
	return p.to - p.from
}

// take is the file's output for normalize: a held string alone when the rest is
// white space in a file whose normal form drops it (a map the library keeps).
func (o *output) take(kind bundle.Kind) string {
	if o.held == 1 && o.blank && (kind == bundle.KindMap || kind == bundle.KindCrtList) {
		for _, p := range o.parts {
			if p.held != "" {
				return p.held
			}
		}
	}
	return o.String()
}

// sameAs reports whether o holds what p held, part by part: held strings compare at
// their pointers first, so a haproxy.cfg written again from the same reused units
// compares in the few bytes written around them. False says nothing: the two may
// still be equal written otherwise.
func (o *output) sameAs(p *output) bool {
	if p == nil || o.n != p.n || len(o.parts) != len(p.parts) || o.held == 0 {
		return false
	}
	ol, pl := o.lit.String(), p.lit.String()
	for i, a := range o.parts {
		b := p.parts[i]
		switch {
		case (a.held == "") != (b.held == ""):
			return false
		case a.held != "":
			if a.held != b.held { // (equal pointers compare at once)
				return false
			}
		case ol[a.from:a.to] != pl[b.from:b.to]:
			return false
		}
	}
	return ol[o.litFrom:] == pl[p.litFrom:]
}
