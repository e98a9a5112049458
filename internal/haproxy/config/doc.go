// Package config is HAProxy's configuration syntax, in one place: how a line of
// haproxy.cfg splits into words, which words start a section, how a server line
// reads, how a map file line reads, and the writers and checks that keep a string
// taken from a Kubernetes object from meaning more than one value in the output.
// The planner, the renderer (writers, checks of every rendered file,
// normalisation), the agent (map checks, read-back) and the runtime client all use
// it; it imports only the standard library and the plain bundle type.
//
// # Words, sections, servers
//
// Words splits a line as HAProxy's parse_line does: blanks separate words, an
// unquoted '#' ends the line, '…' is literal, "…" keeps blanks and takes backslash
// escapes; a backslash escapes a blank, '\', '#', quotes, "$" inside double quotes,
// and writes \t \n \r \xHH; before any other character it stays (\1 in a regex
// replacement stays \1). Environment variables are kept as written. Parse groups the
// lines into sections (IsSectionKeyword: the one list of section keywords, HAProxy
// 2.6 to 3.2) and directives; Config.String writes a canonical form that parses back
// to the same sections (FuzzParse). Config.Replaced derives the parse of a text that
// differs in one section (a backend's server lines) from the parse of the text
// before, sharing the other sections and keeping how those after it moved
// (lines.go). ReadServer reads `server <name> <address> [options]`, grouping options
// by the number of values each keyword takes; Weight, Disabled and IPPort read what
// the planner and the read-back compare.
//
// # Writers and checks
//
// QuoteWord writes any string without control characters as exactly one word
// (single quotes unless the word is plain); QuoteLogFormatWord also doubles '%';
// CheckFetchArg accepts sample-fetch arguments. CheckMapKey, CheckMapValue and
// CheckMapEntry accept map entries that the map file and the runtime API both carry
// exactly; SplitMapLine reads one map line as HAProxy 2.6 loads it; CheckMapFile,
// CheckCrtList and CheckConfig (lines HAProxy reads whole: no control characters,
// quotes closed, at most MaxLineWords words) check whole files, and Check picks the
// check for a bundle file's kind. Errors are *ContextError (which context, which
// value, why) and *LineError (which line).
package config
