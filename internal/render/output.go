package render

import (
	"bytes"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// heldPiece is the size from which a map's one written string is held, not copied.
const heldPiece = 32 << 10

// output is what a top-level template writes. A map whose output is one large
// string amid white space (a map text the library keeps, see gateway_merge_runs,
// written by a snippet between newlines) is taken as that string, without a copy:
// normalize would drop the white space around it anyway. Anything else is copied
// into one buffer, sized from the file's last output when it first holds more
// than white space, and else grown by doubling (Grow before each write: an append
// grows a large buffer by a quarter at a time, which allocated and copied five
// times the size of a file of megabytes rendered from nothing).
type output struct {
	b      strings.Builder
	piece  string // the large string held, which belongs at b's position at
	at     int
	blank  bool // b holds only white space
	sizeTo int  // the size b grows to for the first text that is not white space
}

func newOutput(last int) *output {
	if last > 0 {
		last += last/32 + 1024
	}
	return &output{blank: true, sizeTo: last}
}

func (o *output) WriteString(s string) (int, error) {
	if len(s) >= heldPiece && o.piece == "" && o.blank {
		o.piece, o.at = s, o.b.Len()
		return len(s), nil
	}
	if o.blank && strings.TrimSpace(s) != "" {
		o.notBlank()
	}
	o.b.Grow(len(s))
	return o.b.WriteString(s)
}

func (o *output) Write(p []byte) (int, error) {
	if o.blank && len(bytes.TrimSpace(p)) > 0 {
		o.notBlank()
	}
	o.b.Grow(len(p))
	return o.b.Write(p)
}

// notBlank is the first write of more than white space: the held piece goes
// where it was written, and b grows to the file's likely size.
func (o *output) notBlank() {
	o.blank = false
	if o.piece != "" {
		o.spill()
	}
	if o.b.Cap() < o.sizeTo {
		o.b.Grow(o.sizeTo - o.b.Len())
	}
}

// spill copies the held piece into b, where it was written.
func (o *output) spill() {
	had := o.b.String()
	o.b = strings.Builder{}
	o.b.Grow(max(o.sizeTo, len(had)+len(o.piece)))
	o.b.WriteString(had[:o.at])
	o.b.WriteString(o.piece)
	o.b.WriteString(had[o.at:])
	o.blank = o.blank && strings.TrimSpace(o.piece) == ""
	o.piece = ""
}

func (o *output) Len() int { return o.b.Len() + len(o.piece) }

// String is everything written so far.
func (o *output) String() string {
	if o.piece != "" {
		o.spill()
	}
	return o.b.String()
}

// take is the file's output for normalize: the held piece alone when the rest is
// white space in a file whose normal form drops it.
func (o *output) take(kind bundle.Kind) string {
	if o.piece != "" && o.blank && (kind == bundle.KindMap || kind == bundle.KindCrtList) {
		return o.piece
	}
	return o.String()
}
