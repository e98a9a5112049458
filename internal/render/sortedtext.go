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
	text   string
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
		return sortedText{chunks: chunksOf(in, start, chunkLines), text: linesText(in, start)}, len(out) == 0
	}
	// Each line belongs to the first chunk whose last line sorts at or after it
	// (the last chunk for a line after them all).
	outs, ins := map[int][]string{}, map[int][]string{}
	first, last := len(t.chunks), -1
	for _, e := range []struct {
		lines []string
		to    map[int][]string
	}{{out, outs}, {in, ins}} {
		for _, l := range e.lines {
			i := sort.Search(len(t.chunks), func(i int) bool { c := t.chunks[i].lines; return c[len(c)-1] >= l })
			i = min(i, len(t.chunks)-1)
			e.to[i] = append(e.to[i], l)
			first, last = min(first, i), max(last, i)
		}
	}
	// The chunks first..last are made again (those without edits kept), the text
	// spliced from t's around them: head bytes before, tail bytes after.
	head, tail := 0, len(t.text)
	for _, c := range t.chunks[:first] {
		head += c.size
	}
	tail -= head
	chunks := make([]*lineChunk, 0, len(t.chunks)+1)
	chunks = append(chunks, t.chunks[:first]...)
	kept := map[*lineChunk]int{} // a chunk kept between first and last: where its text is in t's
	found, midLen, at := true, 0, head
	for i := first; i <= last; i++ {
		c := t.chunks[i]
		tail -= c.size
		if _, edited := outs[i]; !edited && len(ins[i]) == 0 {
			chunks, kept[c], midLen, at = append(chunks, c), at, midLen+c.size, at+c.size
			continue
		}
		lines, ok := editSorted(c.lines, outs[i], ins[i])
		found = found && ok
		for _, nc := range chunksOf(lines, start, 2*chunkLines) {
			chunks, midLen = append(chunks, nc), midLen+nc.size
		}
		at += c.size
	}
	mid := chunks[first:]
	chunks = append(chunks, t.chunks[last+1:]...)

	var b strings.Builder
	b.Grow(head + midLen + tail)
	b.WriteString(t.text[:head])
	for _, c := range mid {
		if from, ok := kept[c]; ok {
			b.WriteString(t.text[from : from+c.size])
			continue
		}
		writeLines(&b, c.lines, start)
	}
	b.WriteString(t.text[len(t.text)-tail:])
	text := b.String()
	bundle.Edited(t.text, text, head, tail) // for the check, plan and hash of the map
	return sortedText{chunks: chunks, text: text}, found
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
