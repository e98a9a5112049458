package runtime

import (
	"fmt"
	"strings"
)

// Limits of what HAProxy 2.6 (default tune.bufsize 16384) reads, prints and takes.
const (
	// MaxMapLine is the longest "key value" map entry (the map file line without its
	// newline) that CheckMapEntry and CheckMapFile accept; it equals
	// bundle.MaxMapLine, which the renderer applies (this package needs only the
	// standard library, so the agent's tests check that both agree). HAProxy reads a
	// map file with fgets into a tune.bufsize buffer, so a line of 16,383 bytes or
	// more (newline included) is read as two entries; `show map` cannot print an
	// entry whose "0x<pointer> key value" line does not fit that buffer either
	// (MaxShowMapEntry). 16000 stays clear of both.
	MaxMapLine = 16000

	// MapFileBufSize is the buffer HAProxy reads map files with (tune.bufsize): a
	// file line is cut every MapFileBufSize-1 bytes, and each piece is parsed as a
	// line of its own. ParseMapFile reads files the same way.
	MapFileBufSize = 16384

	// MaxShowMapEntry is the longest "key value" that `show map` always prints:
	// HAProxy formats "<pointer> key value\n" into one tune.bufsize buffer and leaves
	// out an entry that does not fit (a 64-bit pointer is at most 18 characters).
	// DiffMap does not compare longer entries.
	MaxShowMapEntry = MapFileBufSize - 1 - len("0x0123456789abcdef") - 2

	// MaxCommand is the longest command line (newline included) the client sends
	// as one map command: HAProxy's CLI reads a command into a tune.bufsize buffer
	// and, for a line near that size, hangs or answers nothing without running it
	// (measured on 2.6.12: an `add map` of 16,384 bytes answers "" and stores
	// nothing). A map operation whose command would be longer is refused unsent;
	// the agent then applies the files with a reload. Escaping (blank, ';', '\')
	// can make a command up to twice as long as the entry.
	MaxCommand = MapFileBufSize - 1024
)

// payloadMarker ends a CLI command that takes a payload: HAProxy 2.6 looks for it at
// the end of every command (after ';' splitting) and then waits for payload lines
// instead of running the command; in non-interactive mode nothing is stored and the
// reply is empty, like a success.
const payloadMarker = "<<"

// MapEntryError is why a map key or value cannot be written to a map file and sent
// over HAProxy's runtime API so that HAProxy holds exactly it.
type MapEntryError struct {
	// Part is "key" or "value".
	Part string
	// Text is the offending key or value, whole (Error quotes it truncated).
	Text string
	// Reason says why, e.g. "holds a newline (0x0a at byte 4)".
	Reason string
}

// Error reads `map <part> "<text, 60 bytes at most>" <reason>`.
func (e *MapEntryError) Error() string {
	return fmt.Sprintf("map %s %s %s", e.Part, quoteShort(e.Text), e.Reason)
}

// quoteShort quotes s with %q, truncated to 60 bytes.
func quoteShort(s string) string {
	const max = 60
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q...(%d bytes)", s[:max], len(s))
}

// CheckMapEntry reports whether key and value can be written as the map file line
// "key value" and sent with add/set map so that HAProxy holds exactly them, both
// from the file (ParseMapFile) and over the CLI (Escape). It accepts what
// bundle.CheckMapEntry (the renderer's rule) accepts, and refuses, naming the part
// and why:
//
//   - an empty key;
//   - a control character (C0 or DEL) anywhere: NUL ends the key or value early, CR
//     and LF end the command and the file line; TAB is refused too, although
//     HAProxy would keep it inside a value, because it is a field separator of map
//     files and of the CLI (HAProxy strips it around values and splits keys on it)
//     and no key or value from a Kubernetes object needs one;
//   - a blank in a key (the file's key ends at the first blank);
//   - a key that starts with '#' (the file line would be a comment);
//   - a value that starts or ends with white space (HAProxy strips blanks from
//     file lines);
//   - a key or value that ends in "<<" (the CLI's payload marker: the command would
//     not run, yet answer like a success);
//   - an entry whose line "key value" is longer than MaxMapLine bytes.
//
// ';', '\', inner blanks and any other byte are fine: Escape protects them on the
// CLI. An empty value is a valid entry (a key-only file line), but add/set map
// cannot send one: the map operations refuse it in Validate (the planner then
// reloads).
func CheckMapEntry(key, value string) error {
	if err := checkMapKey(key); err != nil {
		return err
	}
	if err := checkMapText("value", value); err != nil {
		return err
	}
	if strings.TrimSpace(value) != value {
		return &MapEntryError{"value", value, "begins or ends with white space, which HAProxy strips from map file lines"}
	}
	if n := len(key) + 1 + len(value); n > MaxMapLine {
		part, text := "value", value
		if len(key) > len(value) {
			part, text = "key", key
		}
		return &MapEntryError{part, text, fmt.Sprintf("makes the map line \"key value\" %d bytes long, over the limit of %d (HAProxy reads longer lines as two entries)", n, MaxMapLine)}
	}
	return nil
}

// checkMapKey applies CheckMapEntry's rules for keys.
func checkMapKey(key string) error {
	if key == "" {
		return &MapEntryError{"key", key, "is empty"}
	}
	if err := checkMapText("key", key); err != nil {
		return err
	}
	switch {
	case strings.Contains(key, " "):
		return &MapEntryError{"key", key, "contains a blank (a map file key ends at the first blank)"}
	case key[0] == '#':
		return &MapEntryError{"key", key, "begins with '#' (the map file line would be a comment)"}
	case len(key) > MaxMapLine:
		return &MapEntryError{"key", key, fmt.Sprintf("is %d bytes long, over the limit of %d", len(key), MaxMapLine)}
	}
	return nil
}

// checkMapText applies the rules keys and values share.
func checkMapText(part, s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return &MapEntryError{part, s, fmt.Sprintf("contains control character 0x%02x at byte %d (NUL, CR, LF and TAB end or split keys and values in HAProxy's CLI and map files)", c, i)}
		}
	}
	if strings.HasSuffix(s, payloadMarker) {
		return &MapEntryError{part, s, `ends in "<<", which HAProxy's CLI takes as a payload marker (the command would not run)`}
	}
	return nil
}

// ParseMapFile reads a map file exactly as HAProxy 2.6 loads one
// (pat_ref_read_from_file_smp with the default tune.bufsize):
//
//   - the file is read in lines of at most MapFileBufSize-1 bytes: a longer line is
//     cut there, and each piece is parsed as a line of its own;
//   - a line whose first byte is '#' is a comment (only the first byte: "  # x" is
//     the entry "#" → "x");
//   - leading spaces and tabs are skipped; a line that is then empty (or starts with
//     CR, LF or NUL) is skipped;
//   - the key runs to the first space, tab, CR, LF or NUL;
//   - spaces and tabs after it are skipped, and the value runs to the first CR, LF
//     or NUL, with trailing spaces and tabs removed (it may be empty).
func ParseMapFile(content string) []MapEntry {
	var entries []MapEntry
	for rest := content; rest != ""; {
		var line string
		line, rest = nextFileLine(rest)
		if e, ok := parseMapLine(line); ok {
			entries = append(entries, e)
		}
	}
	return entries
}

// nextFileLine returns what one fgets(buf, MapFileBufSize) reads from s: up to and
// including the first LF, at most MapFileBufSize-1 bytes.
func nextFileLine(s string) (line, rest string) {
	n := len(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		n = i + 1
	}
	if n > MapFileBufSize-1 {
		n = MapFileBufSize - 1
	}
	return s[:n], s[n:]
}

// parseMapLine parses one piece read by nextFileLine; false: nothing to load.
func parseMapLine(line string) (MapEntry, bool) {
	if line != "" && line[0] == '#' {
		return MapEntry{}, false
	}
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i == len(line) || line[i] == '\r' || line[i] == '\n' || line[i] == 0 {
		return MapEntry{}, false
	}
	k := i
	for i < len(line) && !strings.ContainsRune(" \t\r\n\x00", rune(line[i])) {
		i++
	}
	key := line[k:i]
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	v := i
	for i < len(line) && line[i] != '\r' && line[i] != '\n' && line[i] != 0 {
		i++
	}
	return MapEntry{Key: key, Value: strings.TrimRight(line[v:i], " \t")}, true
}

// CheckMapFile reports whether every line of a map file loads into an entry that the
// runtime API can reproduce: each line (comments included) is at most MaxMapLine
// bytes without its newline, holds no control character other than a tab or a CR
// right before the newline (HAProxy would silently cut the line at NUL or CR), and
// every entry HAProxy would load from it passes CheckMapEntry. The error names the
// line (1-based).
func CheckMapFile(content string) error {
	for n, rest := 1, content; rest != ""; n++ {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if len(line) > MaxMapLine {
			return fmt.Errorf("line %d: %d bytes long, over the limit of %d (HAProxy reads lines of %d bytes or more as two entries)",
				n, len(line), MaxMapLine, MapFileBufSize-1)
		}
		e, ok := parseMapLine(line)
		if !ok {
			continue
		}
		body := strings.TrimSuffix(line, "\r")
		for i := 0; i < len(body); i++ {
			if c := body[i]; (c < 0x20 && c != '\t') || c == 0x7f {
				return fmt.Errorf("line %d: control character 0x%02x at byte %d (HAProxy would load only %q → %q)",
					n, c, i, truncate(e.Key, 60), truncate(e.Value, 60))
			}
		}
		if err := CheckMapEntry(e.Key, e.Value); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return nil
}
