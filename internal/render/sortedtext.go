package render

import (
	"sort"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// sortedText is a sorted list of map lines and its text (see spliceText), the list
// held in chunks that an edit copies alone. A flat list was copied whole by every
// edit (50,000 strings for one route added at 50,000) and walked line by line to
// find where the text changes; here the text's pieces are found from the chunks'
// sizes. A version is never modified: an edit makes another, sharing what it kept.
type sortedText struct {
	chunks []*lineChunk // never empty ones
	text   bundle.Text  // in pieces an edit shares with the last version
}

// lineChunk is consecutive lines of a sortedText and the length of their text.
type lineChunk struct {
	lines []string
	size  int
}

// chunkLines is how many lines a chunk is made with; an edit splits a chunk grown
// past twice that.
const chunkLines = 256

// chunksOf cuts sorted lines into chunks of chunkLines, the last of them up to most
// lines.
func chunksOf(lines []string, start func(string) int, most int) []*lineChunk {
	var out []*lineChunk
	for len(lines) > 0 {
		n := len(lines)
		if n > most {
			n = chunkLines
		}
		out = append(out, &lineChunk{lines: lines[:n:n], size: textLen(lines[:n], start)})
		lines = lines[n:]
	}
	return out
}

// edited returns t without one occurrence of each line of out and with the lines
// of in; found is false when a line of out is not there. out and in are sorted
// here (the caller's to give).
func (t sortedText) edited(out, in []string, start func(string) int) (_ sortedText, found bool) {
	if len(out) == 0 && len(in) == 0 {
		return t, true
	}
	sort.Strings(out)
	sort.Strings(in)
	if len(t.chunks) == 0 {
		return sortedText{chunks: chunksOf(in, start, chunkLines), text: bundle.TextOf(linesText(in, start))}, len(out) == 0
	}
	outs, ins := map[int][]string{}, map[int][]string{}
	first, last := len(t.chunks), -1
	group := func(lines []string, to map[int][]string) {
		for _, l := range lines {
			i := t.chunkOf(l)
			to[i] = append(to[i], l)
			first, last = min(first, i), max(last, i)
		}
	}
	group(out, outs)
	group(in, ins)
	// The chunks first..last are made again (those without edits kept), the text
	// edited between them: t's pieces before and after are shared.
	head := 0
	for _, c := range t.chunks[:first] {
		head += c.size
	}
	var b strings.Builder
	chunks := make([]*lineChunk, 0, len(t.chunks)+1)
	chunks = append(chunks, t.chunks[:first]...)
	found, at := true, head // at: where chunk i's text is in t's
	for i := first; i <= last; i++ {
		c := t.chunks[i]
		if _, edited := outs[i]; !edited && len(ins[i]) == 0 {
			chunks = append(chunks, c)
			b.WriteString(t.text.Slice(at, at+c.size))
		} else {
			lines, ok := editSorted(c.lines, outs[i], ins[i])
			found = found && ok
			for _, nc := range chunksOf(lines, start, 2*chunkLines) {
				chunks = append(chunks, nc)
				writeLines(&b, nc.lines, start)
			}
		}
		at += c.size
	}
	chunks = append(chunks, t.chunks[last+1:]...)
	text := t.text.Edited(head, at, b.String())
	bundle.Edited(t.text, text, head, t.text.Len()-at) // for the check, plan and hash of the map
	return sortedText{chunks: chunks, text: text}, found
}

// lines is t's list, flat (a copy).
func (t sortedText) lines() []string {
	n := 0
	for _, c := range t.chunks {
		n += len(c.lines)
	}
	out := make([]string, 0, n)
	for _, c := range t.chunks {
		out = append(out, c.lines...)
	}
	return out
}

// chunkOf is the chunk line l belongs to: the first whose last line sorts at or
// after it (the last chunk for a line after them all).
func (t sortedText) chunkOf(l string) int {
	i := sort.Search(len(t.chunks), func(i int) bool { c := t.chunks[i].lines; return c[len(c)-1] >= l })
	return min(i, len(t.chunks)-1)
}

// writeLines writes the text of lines (see spliceText).
func writeLines(b *strings.Builder, lines []string, start func(string) int) {
	for _, l := range lines {
		if i := start(l); i >= 0 {
			b.WriteString(l[i:])
			b.WriteByte('\n')
		}
	}
}
