package agentapi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// FileEdit is a changed file of a RuntimeRequest sent as splices of the copy the
// agent holds, so that a change of a few map lines costs a few lines on the wire
// and in the agent's checks, not the whole file.
type FileEdit struct {
	Kind bundle.Kind `json:"kind"`
	Name string      `json:"name"`
	// BaseHash is the content hash (bundle.HashContent) of the file the splices
	// apply to; the agent refuses the request (409) when it holds another one.
	BaseHash string `json:"baseHash"`
	// Hash is the content hash of the result; a mismatch is refused (400).
	Hash    string   `json:"hash"`
	Splices []Splice `json:"splices"`
}

// Splice replaces Delete bytes at Offset of the base content with Insert. The
// splices of an edit are in ascending, non-overlapping order of Offset.
type Splice struct {
	Offset int    `json:"offset"`
	Delete int    `json:"delete,omitempty"`
	Insert string `json:"insert,omitempty"`
}

// MaxEditDistance bounds the line diff EditOf computes (lines deleted plus
// inserted between the first and the last change); a larger change is sent whole.
const MaxEditDistance = 200

// EditOf returns f as splices of base (a file of the same kind and name), or
// false when the splices would not be much smaller than f itself.
func EditOf(base, f bundle.File) (FileEdit, bool) {
	splices, ok := Diff(base.Content, f.Content)
	if !ok {
		return FileEdit{}, false
	}
	size := 0
	for _, s := range splices {
		size += len(s.Insert) + 32
	}
	if size*2 > f.Content.Len() {
		return FileEdit{}, false
	}
	// Hashed here rather than trusted from the File: a copied File keeps a stale one.
	return FileEdit{Kind: f.Kind, Name: f.Name, BaseHash: bundle.HashText(base.Content),
		Hash: bundle.HashText(f.Content), Splices: splices}, true
}

// Diff returns the line splices that turn old into new, or false when they
// differ by more than MaxEditDistance lines. Common leading and trailing lines
// are skipped first (bundle.CommonLines); the rest is a Myers diff, O((N+M)·D) for D changed lines.
func Diff(old, new bundle.Text) ([]Splice, bool) {
	pre, suf := bundle.CommonLines(old, new)
	a, b := splitLines(old.Slice(pre, old.Len()-suf)), splitLines(new.Slice(pre, new.Len()-suf))
	hunks, ok := bundle.Hunks(a, b, MaxEditDistance)
	if !ok {
		return nil, false
	}
	// Byte offsets of the middle's lines in old.
	starts := make([]int, len(a)+1)
	starts[0] = pre
	for i, l := range a {
		starts[i+1] = starts[i] + len(l)
	}
	out := make([]Splice, 0, len(hunks))
	for _, h := range hunks {
		out = append(out, Splice{Offset: starts[h.A0], Delete: starts[h.A1] - starts[h.A0],
			Insert: strings.Join(b[h.B0:h.B1], "")})
	}
	return out, true
}

// splitLines splits s after each newline; the pieces joined are s.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

// Apply returns base with the splices applied; it refuses splices out of order,
// overlapping or outside base. The result shares base's text outside the splices
// (bundle.Text.Edited).
func (e FileEdit) Apply(base bundle.Text) (bundle.Text, error) {
	if err := e.check(base.Len()); err != nil {
		return bundle.Text{}, err
	}
	out := base
	for i := len(e.Splices) - 1; i >= 0; i-- { // from the end: offsets before stay base's
		s := e.Splices[i]
		out = out.Edited(s.Offset, s.Offset+s.Delete, s.Insert)
	}
	if len(e.Splices) > 0 { // the bytes before the first splice and after the last are base's
		last := e.Splices[len(e.Splices)-1]
		bundle.Edited(base, out, e.Splices[0].Offset, base.Len()-last.Offset-last.Delete)
	}
	return out, nil
}

// Touched returns, without building the result, the lines of Apply(base) that the
// splices wrote: each insert extended to whole lines (what a caller checks line by
// line before it spends a copy of the file on the edit). It refuses what Apply
// refuses.
func (e FileEdit) Touched(base bundle.Text) ([]string, error) {
	if err := e.check(base.Len()); err != nil {
		return nil, err
	}
	// The result is segments[0] + segments[1] + ...: base's bytes from..to and
	// inserts alternating (base read only around the inserts).
	type segment struct {
		from, to int    // base's bytes, for an even index
		insert   string // for an odd one
	}
	segments := make([]segment, 0, 2*len(e.Splices)+1)
	at := 0
	for _, s := range e.Splices {
		segments = append(segments, segment{from: at, to: s.Offset}, segment{insert: s.Insert})
		at = s.Offset + s.Delete
	}
	segments = append(segments, segment{from: at, to: base.Len()})
	touched := make([]string, 0, len(e.Splices))
	for p := 1; p < len(segments); p += 2 {
		var line []string
		for q := p - 1; q >= 0; q-- { // back to the newline before the insert
			g := segments[q]
			if q%2 == 1 {
				if i := strings.LastIndexByte(g.insert, '\n'); i >= 0 {
					line = append(line, g.insert[i+1:])
					break
				}
				line = append(line, g.insert)
				continue
			}
			if i := base.LastIndexByte(g.to, '\n'); i >= g.from {
				line = append(line, base.Slice(i+1, g.to))
				break
			}
			line = append(line, base.Slice(g.from, g.to))
		}
		slices.Reverse(line)
		line = append(line, segments[p].insert)
		for q := p + 1; q < len(segments); q++ { // on to the newline after it
			g := segments[q]
			if q%2 == 1 {
				if i := strings.IndexByte(g.insert, '\n'); i >= 0 {
					line = append(line, g.insert[:i])
					break
				}
				line = append(line, g.insert)
				continue
			}
			if i := base.IndexByte(g.from, '\n'); i >= 0 && i < g.to {
				line = append(line, base.Slice(g.from, i))
				break
			}
			line = append(line, base.Slice(g.from, g.to))
		}
		touched = append(touched, strings.Join(line, ""))
	}
	return touched, nil
}

// check refuses splices out of order, overlapping or outside a base of size bytes.
func (e FileEdit) check(size int) error {
	at := 0
	for i, s := range e.Splices {
		if s.Offset < at || s.Delete < 0 || s.Offset+s.Delete > size || s.Offset+s.Delete < s.Offset {
			return fmt.Errorf("edit of %s:%s: splice %d out of order or outside the file", e.Kind, e.Name, i)
		}
		at = s.Offset + s.Delete
	}
	return nil
}
