package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"sort"
	"unsafe"
)

// A large content (hashCacheMin bytes or more) is hashed in chunks: its hash is the
// SHA-256 of chunkedPrefix followed by the SHA-256 of each chunk, in order. Where a
// chunk ends depends only on the bytes near that place and on where the chunk began
// (content-defined chunking), so a content edited in one place has the chunks of its
// base before the edit and, shortly after it, the same chunks again: its hash costs
// the chunks around the edit, whatever the file's size. (A plain SHA-256 could only
// be resumed from the first changed byte on: half of a 10 MB haproxy.cfg, on
// average, for one changed server line.)
//
// A chunk ends after a line: the first line end at least chunkMin bytes into it
// whose last 16 bytes (newline included) mix to a value with chunkBits zero top
// bits, else at chunkMax bytes, else at the content's end. Both sides of the agent
// protocol compute it here; a content under hashCacheMin bytes keeps the plain
// SHA-256 of its bytes.
const (
	chunkMin  = 16 << 10
	chunkMax  = 128 << 10
	chunkBits = 10 // about one line end in 1,024 past chunkMin ends a chunk
)

// chunkedPrefix begins the hashed list of chunk hashes: no plain SHA-256 of a
// content hashes the same bytes.
const chunkedPrefix = "haptic chunked sha-256\n"

// chunkSum is one chunk: where it ends in its content and its SHA-256.
type chunkSum struct {
	end int
	sum [sha256.Size]byte
}

// chunkEnd is where the chunk of s that begins at start ends.
func chunkEnd(s Text, start int) int {
	limit := min(s.Len(), start+chunkMax)
	for at := start + chunkMin - 1; at < limit; {
		x := s.IndexByte(at, '\n')
		if x < 0 || x >= limit {
			break
		}
		if endsChunk(s.Slice(x-15, x+1), 15) {
			return x + 1
		}
		at = x + 1
	}
	return limit
}

// endsChunk reports whether the line end at x ends a chunk (x ≥ 15).
func endsChunk(s string, x int) bool {
	h := le64(s, x-15)*0x9e3779b97f4a7c15 ^ le64(s, x-7)*0xc2b2ae3d27d4eb4f
	h ^= h >> 32
	h *= 0xd6e8feb86659fd93
	return h>>(64-chunkBits) == 0
}

// le64 is the 8 bytes of s at i, little-endian.
func le64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// chunkOn appends the chunks of s from start (a chunk's beginning) to its end.
func chunkOn(s Text, start int, out []chunkSum) []chunkSum {
	for start < s.Len() {
		out = appendChunkOf(out, s, start)
		start = out[len(out)-1].end
	}
	return out
}

// appendChunkOf appends the chunk of s that begins at start, hashed where it is:
// piece by piece where s is in pieces.
func appendChunkOf(out []chunkSum, s Text, start int) []chunkSum {
	end := chunkEnd(s, start)
	if s.PieceEnd(start) >= end {
		w := s.Slice(start, end)
		return append(out, chunkSum{end: end, sum: sha256.Sum256(unsafe.Slice(unsafe.StringData(w), len(w)))})
	}
	h := sha256.New()
	for at := start; at < end; {
		e := min(end, s.PieceEnd(at))
		_, _ = io.WriteString(h, s.Slice(at, e))
		at = e
	}
	c := chunkSum{end: end}
	h.Sum(c.sum[:0])
	return append(out, c)
}

// chunkedHash is the hash of a content with these chunks.
func chunkedHash(chunks []chunkSum) string {
	d := sha256.New()
	d.Write([]byte(chunkedPrefix))
	for i := range chunks {
		d.Write(chunks[i].sum[:])
	}
	return hex.EncodeToString(d.Sum(nil))
}

// chunkEdited is chunkOn(s, 0, nil) for s made from base, whose chunks are known.
// The chunks of base that end within the lines the two begin with are s's too. From
// the last of them s is cut anew, until a cut falls within the lines the two end
// with, at a place where one of base's chunks ended: from there on s's chunks are
// base's, moved.
func chunkEdited(base, s Text, baseChunks []chunkSum) []chunkSum {
	prefix, suffix := CommonLines(base, s)
	// A chunk that ended before prefix ended there in s too; base's last chunk ended
	// with base, which s may not.
	k := sort.Search(len(baseChunks)-1, func(i int) bool { return baseChunks[i].end > prefix })
	out := make([]chunkSum, k, len(baseChunks)+4)
	copy(out, baseChunks[:k])
	start := 0
	if k > 0 {
		start = out[k-1].end
	}
	moved := s.Len() - base.Len()
	same := s.Len() - suffix // s[same:] is base[same-moved:]
	for start < s.Len() {
		out = appendChunkOf(out, s, start)
		start = out[len(out)-1].end
		if start < same || start == s.Len() {
			continue
		}
		// From a place where a chunk of base began, the same bytes up to the same
		// end are cut the same way.
		j := sort.Search(len(baseChunks), func(i int) bool { return baseChunks[i].end >= start-moved })
		if j < len(baseChunks)-1 && baseChunks[j].end == start-moved {
			for _, c := range baseChunks[j+1:] {
				out = append(out, chunkSum{end: c.end + moved, sum: c.sum})
			}
			break
		}
	}
	return out
}
