package bundle

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomLines is n lines of a map-like text.
func randomLines(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "@ns/gw:80/host-%d.example.com/p%d be_%d\n", r.IntN(100000), r.IntN(50), r.IntN(1000))
	}
	return b.String()
}

// TestTextEditsAreTheEditedString edits texts in pieces again and again, at random
// places (within a line, at line ends, at the ends, empty and large middles), and
// checks every version against the same edits made to a flat string: its bytes,
// slices, searches, compares, common lines with the version before, and hashes
// (whole and edited) are the flat string's.
func TestTextEditsAreTheEditedString(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 12))
	for round := range 40 {
		flat := randomLines(r, 200+r.IntN(8000))
		text := TextOf(flat)
		HashText(text)
		for step := range 30 {
			i := r.IntN(len(flat) + 1)
			j := min(len(flat), i+r.IntN(3)*r.IntN(2000))
			if r.IntN(2) == 0 { // at line ends, as the render edits
				i = strings.LastIndexByte(flat[:i], '\n') + 1
				if k := strings.IndexByte(flat[j:], '\n'); k >= 0 {
					j += k + 1
				}
			}
			mid := ""
			switch r.IntN(4) {
			case 0:
			case 1:
				mid = randomLines(r, 1+r.IntN(3))
			case 2:
				mid = randomLines(r, 3000) // larger than a piece
			default:
				mid = "x"
			}
			nextFlat := flat[:i] + mid + flat[j:]
			next := text.Edited(i, j, mid)
			name := fmt.Sprintf("round %d step %d (edit %d..%d, %d bytes in)", round, step, i, j, len(mid))
			if next.Len() != len(nextFlat) || next.String() != nextFlat {
				t.Fatalf("%s: the text is not the edited string", name)
			}
			if parts := next.Parts(); len(parts) > 2+2*len(nextFlat)/pieceSize+2*step {
				t.Fatalf("%s: %d pieces for %d bytes", name, len(parts), len(nextFlat))
			}
			for range 20 {
				a := r.IntN(len(nextFlat) + 1)
				b := a + r.IntN(len(nextFlat)-a+1)
				if got := next.Slice(a, b); got != nextFlat[a:b] {
					t.Fatalf("%s: Slice(%d, %d) is not the string's", name, a, b)
				}
			}
			for range 5 {
				a := r.IntN(len(nextFlat) + 1)
				b := a + r.IntN(len(nextFlat)-a+1)
				if got, want := next.CountByte(a, b, '\n'), strings.Count(nextFlat[a:b], "\n"); got != want {
					t.Fatalf("%s: CountByte(%d, %d) = %d, want %d", name, a, b, got, want)
				}
				sub := nextFlat[a:min(b, a+1+r.IntN(40))]
				from := max(0, a-r.IntN(100))
				to := min(len(nextFlat), a+len(sub)+r.IntN(3)-1)
				if got, want := next.Contains(from, to, sub), strings.Contains(nextFlat[from:to], sub); got != want {
					t.Fatalf("%s: Contains(%d, %d, %q) = %v, want %v", name, from, to, sub, got, want)
				}
				at := strings.Index(nextFlat[from:], sub)
				if at >= 0 {
					at += from
				}
				if got := next.Index(from, sub); got != at {
					t.Fatalf("%s: Index(%d, %q) = %d, want %d", name, from, sub, got, at)
				}
				n := r.IntN(strings.Count(nextFlat, "\n") + 2)
				want := len(nextFlat)
				if k := n; k == 0 {
					want = 0
				} else {
					for i := 0; i < len(nextFlat); i++ {
						if nextFlat[i] == '\n' {
							if k--; k == 0 {
								want = i + 1
								break
							}
						}
					}
				}
				if got := next.AfterLines(n); got != want {
					t.Fatalf("%s: AfterLines(%d) = %d, want %d", name, n, got, want)
				}
			}
			wantP, wantS := commonLinesFrom(TextOf(flat), TextOf(nextFlat), 0, 0)
			if p, s := commonLinesFrom(text, next, 0, 0); p != wantP || s != wantS {
				t.Fatalf("%s: common lines %d/%d, want %d/%d", name, p, s, wantP, wantS)
			}
			Edited(text, next, i, len(flat)-j)
			if p, s := CommonLines(next, text); p != wantP || s != wantS {
				t.Fatalf("%s: remembered common lines %d/%d, want %d/%d", name, p, s, wantP, wantS)
			}
			want := HashContent(nextFlat)
			if got := HashEdited(text, next); got != want {
				t.Fatalf("%s: HashEdited is not the string's hash", name)
			}
			if !next.Equal(TextOf(nextFlat)) || !TextOf(nextFlat).Equal(next) || (nextFlat != flat && next.Equal(text)) {
				t.Fatalf("%s: Equal disagrees with the strings' compare", name)
			}
			flat, text = nextFlat, next
		}
		if got := HashText(Pieces(text.Parts())); got != HashContent(flat) {
			t.Fatalf("round %d: the hash of a text in pieces is not its string's", round)
		}
	}
}

func TestTextWritesAndEncodesItsBytes(t *testing.T) {
	text := TextOf(randomLines(rand.New(rand.NewPCG(1, 2)), 5000)).Edited(100, 200, "new line\n")
	if len(text.Parts()) < 2 {
		t.Fatalf("an edited large text has %d pieces, want it split", len(text.Parts()))
	}
	var b strings.Builder
	if _, err := text.WriteTo(&b); err != nil || b.String() != text.String() {
		t.Fatalf("WriteTo wrote %d bytes (%v), want the text's %d", b.Len(), err, text.Len())
	}
	raw, err := json.Marshal(File{Kind: KindMap, Name: "m", Content: text})
	if err != nil {
		t.Fatal(err)
	}
	var back File
	if err := json.Unmarshal(raw, &back); err != nil || back.Content.String() != text.String() {
		t.Fatalf("JSON round trip lost the text (%v)", err)
	}
	if !text.Same(text) || text.Same(back.Content) || !text.Equal(back.Content) {
		t.Fatal("Same is identity, Equal is content")
	}
}
