package plan

import "sort"

// entryList is a parse's entries in pieces that derived parses share: a change
// copies no entry it kept, only the references to the pieces around it (moved by
// the change's length after it). Copying every entry's offsets was most of what a
// plan allocated at 3,000 routes (five maps of 3,000–12,000 entries per change).
type entryList struct {
	pieces []entryPiece
	starts []int // starts[i]: the index of pieces[i]'s first entry; last: the count
}

// entryPiece is entries in text order; at is never written once made.
type entryPiece struct {
	at    []entryAt
	shift int32 // added to every offset of at
}

// maxPieces bounds the pieces of a list: past it, a derived list is copied into
// one (once per so many changes, not at each).
const maxPieces = 32

func newEntryList(at []entryAt) entryList {
	l := entryList{}
	l.add(at, 0)
	l.index()
	return l
}

func (l *entryList) add(at []entryAt, shift int32) {
	if len(at) > 0 {
		l.pieces = append(l.pieces, entryPiece{at: at, shift: shift})
	}
}

func (l *entryList) index() {
	l.starts = make([]int, len(l.pieces)+1)
	for i, p := range l.pieces {
		l.starts[i+1] = l.starts[i] + len(p.at)
	}
}

func (l *entryList) len() int { return l.starts[len(l.starts)-1] }

func (l *entryList) get(i int) entryAt {
	p := sort.SearchInts(l.starts, i+1) - 1 // the last piece starting at or before i
	pc := l.pieces[p]
	return pc.at[i-l.starts[p]].moved(pc.shift)
}

// derived is the list of a text made from this list's by replacing the entries
// between the first prefixN and the last suffixN with mid (offsets in the new
// text), the last suffixN moved by shift bytes.
func (l *entryList) derived(prefixN int, mid []entryAt, suffixN int, shift int32) entryList {
	out := entryList{pieces: make([]entryPiece, 0, len(l.pieces)+3)}
	tail := l.len() - suffixN
	for i, p := range l.pieces {
		if s := l.starts[i]; s < prefixN {
			out.add(p.at[:min(len(p.at), prefixN-s)], p.shift)
		}
	}
	out.add(mid, 0)
	for i, p := range l.pieces {
		if s, e := l.starts[i], l.starts[i+1]; e > tail {
			out.add(p.at[max(s, tail)-s:], p.shift+shift)
		}
	}
	if len(out.pieces) > maxPieces {
		flat := make([]entryAt, 0, prefixN+len(mid)+suffixN)
		for _, p := range out.pieces {
			for _, a := range p.at {
				flat = append(flat, a.moved(p.shift))
			}
		}
		out.pieces = []entryPiece{{at: flat}}
	}
	out.index()
	return out
}
