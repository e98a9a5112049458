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
	if size*2 > len(f.Content) {
		return FileEdit{}, false
	}
	// Hashed here rather than trusted from the File: a copied File keeps a stale one.
	return FileEdit{Kind: f.Kind, Name: f.Name, BaseHash: bundle.HashContent(base.Content),
		Hash: bundle.HashContent(f.Content), Splices: splices}, true
}

// Diff returns the line splices that turn old into new, or false when they
// differ by more than MaxEditDistance lines. Common leading and trailing lines
// are skipped first (bundle.CommonLines); the rest is a Myers diff, O((N+M)·D) for D changed lines.
func Diff(old, new string) ([]Splice, bool) {
	pre, suf := bundle.CommonLines(old, new)
	a, b := splitLines(old[pre:len(old)-suf]), splitLines(new[pre:len(new)-suf])
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
// overlapping or outside base.
func (e FileEdit) Apply(base string) (string, error) {
	if err := e.check(base); err != nil {
		return "", err
	}
	var sb strings.Builder
	sb.Grow(len(base))
	at := 0
	for _, s := range e.Splices {
		sb.WriteString(base[at:s.Offset])
		sb.WriteString(s.Insert)
		at = s.Offset + s.Delete
	}
	sb.WriteString(base[at:])
	out := sb.String()
	if len(e.Splices) > 0 { // the bytes before the first splice and after the last are base's
		bundle.Edited(base, out, e.Splices[0].Offset, len(base)-at)
	}
	return out, nil
}

// Touched returns, without building the result, the lines of Apply(base) that the
// splices wrote: each insert extended to whole lines (what a caller checks line by
// line before it spends a copy of the file on the edit). It refuses what Apply
// refuses.
func (e FileEdit) Touched(base string) ([]string, error) {
	if err := e.check(base); err != nil {
		return nil, err
	}
	// The result is pieces[0] + pieces[1] + ...: base and inserts alternating.
	pieces := make([]string, 0, 2*len(e.Splices)+1)
	at := 0
	for _, s := range e.Splices {
		pieces = append(pieces, base[at:s.Offset], s.Insert)
		at = s.Offset + s.Delete
	}
	pieces = append(pieces, base[at:])
	touched := make([]string, 0, len(e.Splices))
	for p := 1; p < len(pieces); p += 2 {
		var line []string
		for q := p - 1; q >= 0; q-- { // back to the newline before the insert
			if i := strings.LastIndexByte(pieces[q], '\n'); i >= 0 {
				line = append(line, pieces[q][i+1:])
				break
			}
			line = append(line, pieces[q])
		}
		slices.Reverse(line)
		line = append(line, pieces[p])
		for q := p + 1; q < len(pieces); q++ { // on to the newline after it
			if i := strings.IndexByte(pieces[q], '\n'); i >= 0 {
				line = append(line, pieces[q][:i])
				break
			}
			line = append(line, pieces[q])
		}
		touched = append(touched, strings.Join(line, ""))
	}
	return touched, nil
}

// check refuses splices out of order, overlapping or outside base.
func (e FileEdit) check(base string) error {
	at := 0
	for i, s := range e.Splices {
		if s.Offset < at || s.Delete < 0 || s.Offset+s.Delete > len(base) || s.Offset+s.Delete < s.Offset {
			return fmt.Errorf("edit of %s:%s: splice %d out of order or outside the file", e.Kind, e.Name, i)
		}
		at = s.Offset + s.Delete
	}
	return nil
}
