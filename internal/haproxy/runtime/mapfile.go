package runtime

import (
	"fmt"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// Limits of what HAProxy 2.6 (default tune.bufsize 16384) prints and takes. The
// map file's own limits (config.MaxMapLine, config.MapFileBufSize) and the rules for
// map entries (config.CheckMapEntry) live in internal/haproxy/config.
const (
	// MaxShowMapEntry is the longest "key value" that `show map` always prints:
	// HAProxy formats "<pointer> key value\n" into one tune.bufsize buffer and leaves
	// out an entry that does not fit (a 64-bit pointer is at most 18 characters).
	// DiffMap does not compare longer entries.
	MaxShowMapEntry = config.MapFileBufSize - 1 - len("0x0123456789abcdef") - 2

	// MaxCommand is the longest command line (newline included) the client sends
	// as one map command: HAProxy's CLI reads a command into a tune.bufsize buffer
	// and, for a line near that size, hangs or answers nothing without running it
	// (measured on 2.6.12: an `add map` of 16,384 bytes answers "" and stores
	// nothing). A map operation whose command would be longer is refused unsent;
	// the agent then applies the files with a reload. Escaping (blank, ';', '\')
	// can make a command up to twice as long as the entry.
	MaxCommand = config.MapFileBufSize - 1024
)

// payloadMarker ends a CLI command that takes a payload: HAProxy 2.6 looks for it at
// the end of every command (after ';' splitting) and then waits for payload lines
// instead of running the command; in non-interactive mode nothing is stored and the
// reply is empty, like a success.
const payloadMarker = "<<"

// quoteShort quotes s with %q, truncated to 60 bytes.
func quoteShort(s string) string {
	const max = 60
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q...(%d bytes)", s[:max], len(s))
}

// ParseMapFile reads a map file exactly as HAProxy 2.6 loads one
// (pat_ref_read_from_file_smp with the default tune.bufsize): the file is read in
// lines of at most config.MapFileBufSize-1 bytes (a longer line is cut there, and
// each piece is parsed as a line of its own), and each is split by
// config.SplitMapLine.
func ParseMapFile(content string) []MapEntry {
	var entries []MapEntry
	EachMapEntry(content, func(key, value string) {
		entries = append(entries, MapEntry{Key: key, Value: value})
	})
	return entries
}

// EachMapEntry calls each with every entry ParseMapFile finds in content, in
// order; key and value are substrings of content.
func EachMapEntry(content string, each func(key, value string)) {
	for rest := content; rest != ""; {
		var line string
		line, rest = nextFileLine(rest)
		if key, value, ok := config.SplitMapLine(line); ok {
			each(key, value)
		}
	}
}

// MapFileEntriesFor is ParseMapFile's entries whose key is in keys: a few keys
// of a large map cost a scan and a lookup per line, not a parse.
func MapFileEntriesFor(content string, keys map[string]bool) []MapEntry {
	var entries []MapEntry
	for rest := content; rest != ""; {
		var line string
		line, rest = nextFileLine(rest)
		if !keys[lineKey(line)] {
			continue
		}
		if key, value, ok := config.SplitMapLine(line); ok {
			entries = append(entries, MapEntry{Key: key, Value: value})
		}
	}
	return entries
}

// lineKey is the key config.SplitMapLine finds in a map file line, without the
// value (a comment line gives a key no caller asks for).
func lineKey(line string) string {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	k := i
	for i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '\n' && line[i] != 0 {
		i++
	}
	return line[k:i]
}

// nextFileLine returns what one fgets(buf, config.MapFileBufSize) reads from s: up
// to and including the first LF, at most config.MapFileBufSize-1 bytes.
func nextFileLine(s string) (line, rest string) {
	n := len(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		n = i + 1
	}
	if n > config.MapFileBufSize-1 {
		n = config.MapFileBufSize - 1
	}
	return s[:n], s[n:]
}
