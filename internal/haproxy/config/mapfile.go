package config

import (
	"fmt"
	"strings"
)

// Limits of what HAProxy 2.6 (default tune.bufsize 16384) reads from a map file.
const (
	// MaxMapLine is the longest map-file line ("key value", without the newline) a
	// bundle may hold and the runtime API may send. HAProxy reads a map file with
	// fgets into a tune.bufsize buffer, so a line of 16,383 bytes or more (newline
	// included) is read as two entries; `show map` cannot print an entry whose
	// "0x<pointer> key value" line does not fit that buffer either. 16000 stays clear
	// of both, and of small bufsize changes.
	MaxMapLine = 16000

	// MapFileBufSize is the buffer HAProxy reads map files with (tune.bufsize): a
	// file line is cut every MapFileBufSize-1 bytes, and each piece is parsed as a
	// line of its own.
	MapFileBufSize = 16384
)

// CheckMapKey accepts a key HAProxy reads back whole from a map file and from the
// runtime API: not empty, no whitespace or control character (they end the key), no
// leading '#' (a comment line), no trailing "<<" (a runtime payload marker).
func CheckMapKey(key string) error {
	bad := func(reason string) error { return &ContextError{Context: "map key", Value: key, Reason: reason} }
	switch {
	case key == "":
		return bad("is empty")
	case key[0] == '#':
		return bad("starts with '#' (a comment line in a map file)")
	case strings.HasSuffix(key, "<<"):
		return bad(`ends with "<<" (a runtime API payload marker)`)
	case len(key) > MaxMapLine:
		return bad(fmt.Sprintf("is %d bytes long (the limit of a map line is %d)", len(key), MaxMapLine))
	}
	if i := controlChar(key); i >= 0 {
		return bad(describeControl(key[i]))
	}
	if strings.ContainsRune(key, ' ') {
		return bad("holds a space (it would end the key)")
	}
	return nil
}

// CheckMapValue accepts a value HAProxy reads back whole: no control character, no
// leading or trailing blank (the file reader and the output normaliser drop them),
// no trailing "<<".
func CheckMapValue(value string) error {
	bad := func(reason string) error { return &ContextError{Context: "map value", Value: value, Reason: reason} }
	if i := controlChar(value); i >= 0 {
		return bad(describeControl(value[i]))
	}
	switch {
	case strings.HasSuffix(value, "<<"):
		return bad(`ends with "<<" (a runtime API payload marker)`)
	case strings.TrimSpace(value) != value:
		return bad("starts or ends with a space")
	case len(value) > MaxMapLine:
		return bad(fmt.Sprintf("is %d bytes long (the limit of a map line is %d)", len(value), MaxMapLine))
	}
	return nil
}

// CheckMapEntry accepts a key and value that the map file line "key value" and the
// runtime API's add/set map both carry exactly, so that HAProxy holds exactly them
// either way (the runtime client escapes blanks, ';' and '\' for the CLI). It
// refuses an empty key; any control character (C0 or DEL; TAB too, a separator of
// both formats; NUL, CR and LF end keys, values, lines and commands); a blank in a
// key (the file's key ends there); a key starting with '#' (a comment line); a value
// starting or ending with white space (HAProxy strips it); a key or value ending in
// "<<" (the CLI's payload marker: the command would not run, yet answer like a
// success); and an entry whose line is longer than MaxMapLine. An empty value is a
// valid entry (a key-only line), which add/set map cannot send: the runtime client
// refuses it.
func CheckMapEntry(key, value string) error {
	if err := CheckMapKey(key); err != nil {
		return err
	}
	if err := CheckMapValue(value); err != nil {
		return err
	}
	if n := len(key) + 1 + len(value); n > MaxMapLine {
		return &ContextError{Context: "map entry", Value: key, Reason: fmt.Sprintf("makes a %d-byte line (the limit is %d)", n, MaxMapLine)}
	}
	return nil
}

// SplitMapLine splits one map-file line (or one piece of a longer line) exactly as
// HAProxy 2.6's file reader (pat_ref_read_from_file_smp) does:
//
//   - a line whose first byte is '#' is a comment (only the first byte: "  # x" is
//     the entry "#" → "x");
//   - leading spaces and tabs are skipped; a line that is then empty (or starts with
//     CR, LF or NUL) is skipped;
//   - the key runs to the first space, tab, CR, LF or NUL;
//   - spaces and tabs after it are skipped, and the value runs to the first CR, LF
//     or NUL, with trailing spaces and tabs removed (it may be empty).
//
// ok is false for lines HAProxy skips.
func SplitMapLine(line string) (key, value string, ok bool) {
	if line != "" && line[0] == '#' {
		return "", "", false
	}
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i == len(line) || line[i] == '\r' || line[i] == '\n' || line[i] == 0 {
		return "", "", false
	}
	k := i
	for i < len(line) && !isMapKeyEnd(line[i]) {
		i++
	}
	key = line[k:i]
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	v := i
	for i < len(line) && line[i] != '\r' && line[i] != '\n' && line[i] != 0 {
		i++
	}
	return key, strings.TrimRight(line[v:i], " \t"), true
}

func isMapKeyEnd(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == 0
}

// CheckMapFile accepts a map file whose every line HAProxy loads as the entry it
// shows, so that the runtime API can reproduce it: no line (comments included: a
// long one loads its tail as an entry) over MaxMapLine bytes, no NUL anywhere, no
// control character other than TAB and a final CR in an entry line (HAProxy would
// silently cut the line there), and every entry passes CheckMapEntry. The renderer
// checks every map it writes with it, and the agent every map it is given.
func CheckMapFile(content string) error { return eachLine(content, checkMapLine) }

// checkMapLine checks line n (from 0) of a map file.
func checkMapLine(n int, line string) error {
	if len(line) > MaxMapLine {
		return lineErr(n, "%d bytes long (the limit of a map line is %d; HAProxy reads lines of %d bytes or more as two entries)",
			len(line), MaxMapLine, MapFileBufSize-1)
	}
	if i := strings.IndexByte(line, 0); i >= 0 {
		return lineErr(n, "holds a NUL byte at byte %d", i)
	}
	key, value, ok := SplitMapLine(line)
	if !ok {
		return nil
	}
	body := strings.TrimSuffix(line, "\r")
	for i := 0; i < len(body); i++ {
		if c := body[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return lineErr(n, "%s at byte %d (HAProxy would load only %.60q → %.60q)", describeControl(c), i, key, value)
		}
	}
	if err := CheckMapEntry(key, value); err != nil {
		return &LineError{Line: n + 1, Err: err}
	}
	return nil
}
