package render

import (
	"bytes"
	"sort"
	"strings"
	"unsafe"

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
	texts   []bundle.Text   // the texts held whole (holdText)
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
		b.WriteString(p.text(lit)[max(0, at-p.at):])
	}
	b.WriteString(lit[o.litFrom:])
	return b.String()
}

// text is the part's text: the held string, or its run of lit (the text written
// directly).
func (p outPart) text(lit string) string {
	if p.held != "" {
		return p.held
	}
	return lit[p.from:p.to]
}

func (p outPart) len() int {
	if p.held != "" {
		return len(p.held)
	}
	return p.to - p.from
}

// take is the file's output for normalize: what is held alone when the rest is
// white space in a file whose normal form drops it (a map the library keeps): the
// text map_text wrote, its pieces not copied, or one held string.
func (o *output) take(kind bundle.Kind) bundle.Text {
	if o.blank && (kind == bundle.KindMap || kind == bundle.KindCrtList) {
		switch {
		case len(o.texts) == 1 && len(o.texts[0].Parts()) == o.held:
			return o.texts[0]
		case o.held == 1:
			for _, p := range o.parts {
				if p.held != "" {
					return bundle.TextOf(p.held)
				}
			}
		}
	}
	return bundle.TextOf(o.String())
}

// holdText writes t, its pieces held.
func (o *output) holdText(t bundle.Text) {
	for _, s := range t.Parts() {
		o.hold(s)
	}
	o.texts = append(o.texts, t)
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

// segment is a piece of everything an output holds, at where it starts.
type segment struct {
	at int
	s  string
}

// segments are everything o holds, in order, without copies: held strings and
// the runs of text written directly around them.
func (o *output) segments() []segment {
	lit := o.lit.String()
	out := make([]segment, 0, len(o.parts)+1)
	for _, p := range o.parts {
		out = append(out, segment{p.at, p.text(lit)})
	}
	if rest := lit[o.litFrom:]; rest != "" {
		out = append(out, segment{o.n - len(rest), rest})
	}
	return out
}

// segmentAt is the index of the segment that holds byte at (len(segs) past the end).
func segmentAt(segs []segment, at int) int {
	return sort.Search(len(segs), func(i int) bool { return segs[i].at+len(segs[i].s) > at })
}

// slice is everything written in [from, to): a copy only when it spans segments.
func slice(segs []segment, from, to int) string {
	if from >= to {
		return ""
	}
	i := segmentAt(segs, from)
	if s := segs[i]; to <= s.at+len(s.s) {
		return s.s[from-s.at : to-s.at]
	}
	var b strings.Builder
	b.Grow(to - from)
	for ; i < len(segs) && segs[i].at < to; i++ {
		s := segs[i]
		b.WriteString(s.s[max(0, from-s.at):min(len(s.s), to-s.at)])
	}
	return b.String()
}

// commonLines is bundle.CommonLines of two outputs' texts without copying them:
// a segment both hold (a reused unit's output at the same place) compares at its
// pointer, the rest byte by byte.
func commonLines(a, b []segment, lenA, lenB int) (prefix, suffix int) {
	n := min(lenA, lenB)
	prefix = commonSegmentPrefix(a, b, n)
	if prefix == lenA && prefix == lenB {
		return prefix, 0
	}
	prefix = lineStart(a, prefix)
	suffix = commonSegmentSuffix(a, b, lenA, lenB, n-prefix)
	// the suffix starts a line on both sides, or after a line's end they share
	if from := lenA - suffix; lineStart(a, from) != from || lineStart(b, lenB-suffix) != lenB-suffix {
		if i := indexNewline(a, from); i >= 0 {
			suffix = lenA - (i + 1)
		} else {
			suffix = 0
		}
	}
	return prefix, suffix
}

// commonSegmentPrefix is the length of the common prefix of two texts in
// segments, at most limit.
func commonSegmentPrefix(a, b []segment, limit int) int {
	n, i, j := 0, 0, 0
	for n < limit && i < len(a) && j < len(b) {
		sa, sb := a[i].s[n-a[i].at:], b[j].s[n-b[j].at:]
		k := min(len(sa), len(sb), limit-n)
		c := k
		if unsafe.StringData(sa) != unsafe.StringData(sb) {
			c = bundle.CommonPrefixLen(sa[:k], sb[:k])
		}
		if n += c; c < k {
			return n
		}
		if n == a[i].at+len(a[i].s) {
			i++
		}
		if n == b[j].at+len(b[j].s) {
			j++
		}
	}
	return n
}

// commonSegmentSuffix is the length of the common suffix of two texts in
// segments (of lengths lenA and lenB), at most limit.
func commonSegmentSuffix(a, b []segment, lenA, lenB, limit int) int {
	n, i, j := 0, len(a)-1, len(b)-1
	for n < limit && i >= 0 && j >= 0 {
		sa := a[i].s[:lenA-n-a[i].at]
		sb := b[j].s[:lenB-n-b[j].at]
		k := min(len(sa), len(sb), limit-n)
		sa, sb = sa[len(sa)-k:], sb[len(sb)-k:]
		c := k
		if unsafe.StringData(sa) != unsafe.StringData(sb) {
			c = bundle.CommonSuffixLen(sa, sb)
		}
		if n += c; c < k {
			return n
		}
		if lenA-n == a[i].at {
			i--
		}
		if lenB-n == b[j].at {
			j--
		}
	}
	return n
}

// lineStart is where the line that holds byte at (or ends before it) starts.
func lineStart(segs []segment, at int) int {
	for i := min(segmentAt(segs, at), len(segs)-1); i >= 0; i-- {
		s := segs[i]
		if k := strings.LastIndexByte(s.s[:max(0, min(len(s.s), at-s.at))], '\n'); k >= 0 {
			return s.at + k + 1
		}
	}
	return 0
}

// indexNewline is where the first '\n' at or after from is, or -1.
func indexNewline(segs []segment, from int) int {
	for i := segmentAt(segs, from); i < len(segs); i++ {
		s := segs[i]
		if k := strings.IndexByte(s.s[max(0, from-s.at):], '\n'); k >= 0 {
			return s.at + max(0, from-s.at) + k
		}
	}
	return -1
}
