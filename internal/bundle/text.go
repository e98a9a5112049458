package bundle

import (
	"encoding/json"
	"io"
	"sort"
	"strings"
	"sync"
	"weak"
)

// Text is a file's content. A large rendered file is held as pieces that its
// versions share: a route added at 50,000 routes edits a few lines of maps and a
// haproxy.cfg megabytes long, and a version made by an edit (Edited) keeps the
// pieces before and after the edit and adds one, instead of copying the whole text
// into a new string (what each change allocated, and the collector then scanned
// for, was mostly such copies). Checks, hashes, plans and the agent's edits read
// a Text around its edits (Slice); String writes it into one string once, for the
// readers that need it whole. A Text is never modified. Texts are not comparable
// with ==: Equal compares contents, Same identities.
type Text struct {
	flat  string // the text, when split is nil
	split *pieces
	_     [0]func()
}

// pieces is a text in order: parts[i] ends at ends[i].
type pieces struct {
	parts []string // never empty
	ends  []int
	once  sync.Once
	flat  string // String's, once asked for
}

// TextOf is the text s.
func TextOf(s string) Text { return Text{flat: s} }

// Pieces is the text of parts in order.
func Pieces(parts []string) Text {
	p := &pieces{parts: make([]string, 0, len(parts)), ends: make([]int, 0, len(parts))}
	n := 0
	for _, s := range parts {
		if s != "" {
			n += len(s)
			p.parts, p.ends = append(p.parts, s), append(p.ends, n)
		}
	}
	switch len(p.parts) {
	case 0:
		return Text{}
	case 1:
		return Text{flat: p.parts[0]}
	}
	return Text{split: p}
}

// Len is the length of the text in bytes.
func (t Text) Len() int {
	if t.split == nil {
		return len(t.flat)
	}
	return t.split.ends[len(t.split.ends)-1]
}

// String is the text as one string: for a text in pieces, written once and
// remembered.
func (t Text) String() string {
	p := t.split
	if p == nil {
		return t.flat
	}
	p.once.Do(func() { p.flat = t.Flat() })
	return p.flat
}

// Flat is the text as one string, written anew for a text in pieces and not
// remembered: for a reader that needs it once (String keeps what it writes for the
// text's life).
func (t Text) Flat() string {
	if t.split == nil {
		return t.flat
	}
	var b strings.Builder
	b.Grow(t.Len())
	_, _ = t.WriteTo(&b)
	return b.String()
}

// Parts is the text's pieces in order (one for a text that is not split; none for
// an empty one). The caller must not modify the slice.
func (t Text) Parts() []string {
	if t.split == nil {
		if t.flat == "" {
			return nil
		}
		return []string{t.flat}
	}
	return t.split.parts
}

// part is the index of the piece that holds byte i (0 ≤ i < Len) and where that
// piece starts.
func (p *pieces) part(i int) (k, start int) {
	k = sort.Search(len(p.ends), func(k int) bool { return p.ends[k] > i })
	if k > 0 {
		start = p.ends[k-1]
	}
	return k, start
}

// PieceEnd is where the piece that holds byte i (i < Len) ends: Slice(i, PieceEnd(i))
// is not a copy.
func (t Text) PieceEnd(i int) int {
	if t.split == nil {
		return len(t.flat)
	}
	k, _ := t.split.part(i)
	return t.split.ends[k]
}

// Slice is the text's bytes from i to j: a substring, without a copy, when they lie
// in one piece.
func (t Text) Slice(i, j int) string {
	p := t.split
	if p == nil {
		return t.flat[i:j]
	}
	if i == j {
		return ""
	}
	if i < 0 || j > t.Len() || i > j {
		panic("bundle.Text.Slice: out of range")
	}
	k, start := p.part(i)
	if j <= p.ends[k] {
		return p.parts[k][i-start : j-start]
	}
	var b strings.Builder
	b.Grow(j - i)
	for at := i; at < j; k++ {
		end := min(j, p.ends[k])
		b.WriteString(p.parts[k][at-start : end-start])
		at, start = end, p.ends[k]
	}
	return b.String()
}

// run is the text from i to the end of the piece that holds byte i (i < Len).
func (t Text) run(i int) string {
	if t.split == nil {
		return t.flat[i:]
	}
	k, start := t.split.part(i)
	return t.split.parts[k][i-start:]
}

// runBack is the text from the start of the piece that holds byte j-1 to j (j > 0).
func (t Text) runBack(j int) string {
	if t.split == nil {
		return t.flat[:j]
	}
	k, start := t.split.part(j - 1)
	return t.split.parts[k][:j-start]
}

func (t Text) byteAt(i int) byte { return t.run(i)[0] }

// IndexByte is the index of the first c at or after from, or -1.
func (t Text) IndexByte(from int, c byte) int {
	for from < t.Len() {
		r := t.run(from)
		if k := strings.IndexByte(r, c); k >= 0 {
			return from + k
		}
		from += len(r)
	}
	return -1
}

// LastIndexByte is the index of the last c before j, or -1.
func (t Text) LastIndexByte(j int, c byte) int {
	for j > 0 {
		r := t.runBack(j)
		if k := strings.LastIndexByte(r, c); k >= 0 {
			return j - len(r) + k
		}
		j -= len(r)
	}
	return -1
}

// CountByte is how many times c occurs in the text from i to j.
func (t Text) CountByte(i, j int, c byte) int {
	n := 0
	for i < j {
		r := t.run(i)
		r = r[:min(len(r), j-i)]
		n += strings.Count(r, string(c))
		i += len(r)
	}
	return n
}

// AfterLines is where the text after its first n lines starts (Len when it has
// fewer).
func (t Text) AfterLines(n int) int {
	at := 0
	for n > 0 && at < t.Len() {
		r := t.run(at)
		if c := strings.Count(r, "\n"); c < n {
			at, n = at+len(r), n-c
			continue
		}
		for ; n > 0; n-- {
			i := strings.IndexByte(r, '\n')
			at, r = at+i+1, r[i+1:]
		}
	}
	return at
}

// Contains reports whether sub occurs in the text from i to j.
func (t Text) Contains(i, j int, sub string) bool { return t.indexIn(i, j, sub) >= 0 }

// Index is where the first sub at or after from starts, or -1.
func (t Text) Index(from int, sub string) int { return t.indexIn(from, t.Len(), sub) }

// indexIn is where the first sub within the text from i to j starts, or -1.
func (t Text) indexIn(i, j int, sub string) int {
	for at := i; at < j; {
		end := min(j, t.PieceEnd(at))
		if k := strings.Index(t.Slice(at, end), sub); k >= 0 {
			return at + k
		}
		// across the piece's end: its last bytes with the next one's first
		if n := len(sub) - 1; n > 0 && end < j {
			w := max(i, end-n)
			if k := strings.Index(t.Slice(w, min(j, end+n)), sub); k >= 0 {
				return w + k
			}
		}
		at = end
	}
	return -1
}

// Edited is the text with its bytes from i to j replaced by mid: it shares every
// piece outside [i, j) with t (those the bounds cut, as substrings). Pieces are
// kept near pieceSize: small ones next to the edit are joined.
func (t Text) Edited(i, j int, mid string) Text {
	n := t.Len()
	if t.split == nil && n < pieceSize {
		return TextOf(t.flat[:i] + mid + t.flat[j:])
	}
	before, after := t.cut(0, i), t.cut(j, n)
	parts := make([]string, 0, len(before)+len(after)+1)
	parts = append(parts, before...)
	parts = joinSmall(parts, mid)
	for _, s := range after {
		parts = joinSmall(parts, s)
	}
	return Pieces(parts)
}

// pieceSize is the size a flat text is split into when edited; a piece below a
// quarter of it is joined to its neighbour when an edit touches it.
const pieceSize = 64 << 10

// cut is the text from i to j as pieces (substrings of t's), a flat text split
// near pieceSize at line ends.
func (t Text) cut(i, j int) []string {
	if i >= j {
		return nil
	}
	if t.split == nil {
		return splitLines(t.flat[i:j])
	}
	p := t.split
	k, start := p.part(i)
	var out []string
	for at := i; at < j; k++ {
		end := min(j, p.ends[k])
		out = append(out, p.parts[k][at-start:end-start])
		at, start = end, p.ends[k]
	}
	return out
}

// splitLines cuts s into pieces of about pieceSize that end at line ends.
func splitLines(s string) []string {
	var out []string
	for len(s) > pieceSize {
		n := strings.IndexByte(s[pieceSize:], '\n')
		if n < 0 || len(s)-(pieceSize+n+1) < pieceSize/4 {
			break
		}
		out, s = append(out, s[:pieceSize+n+1]), s[pieceSize+n+1:]
	}
	return append(out, s)
}

// joinSmall appends s to parts, joined to the last piece when either is small.
func joinSmall(parts []string, s string) []string {
	if s == "" {
		return parts
	}
	if k := len(parts) - 1; k >= 0 && (len(parts[k]) < pieceSize/4 || len(s) < pieceSize/4) && len(parts[k])+len(s) <= 2*pieceSize {
		parts[k] = parts[k] + s
		return parts
	}
	return append(parts, s)
}

// Equal reports whether the two texts have the same bytes; pieces they share are
// not read.
func (t Text) Equal(u Text) bool {
	if t.Len() != u.Len() {
		return false
	}
	if t.Same(u) {
		return true
	}
	a, b := t.Parts(), u.Parts()
	var x, y string
	for {
		if x == "" {
			if len(a) == 0 {
				return true
			}
			x, a = a[0], a[1:]
		}
		if y == "" {
			y, b = b[0], b[1:]
		}
		n := min(len(x), len(y))
		if !SameString(x[:n], y[:n]) && x[:n] != y[:n] {
			return false
		}
		x, y = x[n:], y[n:]
	}
}

// Same reports whether the two are one text (the same string, or the same pieces),
// without reading them.
func (t Text) Same(u Text) bool {
	if t.split != nil || u.split != nil {
		return t.split == u.split
	}
	return SameString(t.flat, u.flat)
}

// id is a Text's identity for the caches of large texts (hashcache.go).
func (t Text) id() contentID {
	if t.split != nil {
		return contentID{split: weak.Make(t.split), len: t.Len()}
	}
	return idOf(t.flat)
}

// WriteTo writes the text to w.
func (t Text) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, s := range t.Parts() {
		k, err := io.WriteString(w, s)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// MarshalJSON writes the text as a JSON string (from a copy that is not kept: a
// file sent whole is sent once).
func (t Text) MarshalJSON() ([]byte, error) { return json.Marshal(t.Flat()) }

// UnmarshalJSON reads a JSON string.
func (t *Text) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = TextOf(s)
	return nil
}
