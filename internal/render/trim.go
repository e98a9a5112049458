package render

import (
	"regexp"
	"strings"
)

// Jinja-style whitespace control, which Scriggo v0.60 lacks: a '-' just inside a
// delimiter ({%- -%}, {{- -}}, {#- -#}) removes all whitespace (spaces, tabs,
// newlines) on that side of the tag, as Jinja and HAPTIC define it. trimMarkers
// rewrites such a template into plain Scriggo before it is compiled:
//
//   - the marker becomes a space, so columns inside the tag do not move;
//   - removed whitespace that holds a newline is kept inside a comment {#…#}, which
//     outputs nothing, so compile errors still point at the author's line numbers.
//
// `{{-` is a marker only when whitespace follows it, because `{{-1}}` is an
// expression (minus one). Comments nest as in Scriggo, string literals inside tags
// are skipped, and {%% … %%} blocks and the body of {% raw %} are left alone.

// trimText is the whitespace a marker removes.
const trimText = " \t\r\n"

// rawEnd finds the end of a raw statement's body.
var rawEnd = regexp.MustCompile(`\{%-?\s*end(\s+raw)?\b`)

// rawStart recognises the body of a {% raw %} or {% raw marker %} statement.
var rawStart = regexp.MustCompile(`^\s*raw(\s+\w+)?\s*$`)

// trimMarkers returns text with its whitespace-control markers applied.
func trimMarkers(text string) string {
	if !strings.Contains(text, "-") {
		return text
	}
	out := &trimBuffer{b: make([]byte, 0, len(text)+len(text)/8)}
	i := 0
	for i < len(text) {
		open := strings.IndexByte(text[i:], '{')
		if open < 0 || i+open+1 >= len(text) {
			out.WriteString(text[i:])
			break
		}
		open += i
		kind := text[open+1]
		if kind != '{' && kind != '%' && kind != '#' {
			out.WriteString(text[i : open+1])
			i = open + 1
			continue
		}
		out.WriteString(text[i:open])
		if kind == '%' && open+2 < len(text) && text[open+2] == '%' {
			// {%% … %%}: Go-like statements, copied as they are.
			end := strings.Index(text[open:], "%%}")
			if end < 0 {
				out.WriteString(text[open:])
				break
			}
			out.WriteString(text[open : open+end+3])
			i = open + end + 3
			continue
		}
		var closeAt int // index of the closing delimiter's first byte
		if kind == '#' {
			closeAt = commentEnd(text, open)
		} else {
			closeAt = tagEnd(text, open, kind)
		}
		if closeAt < 0 {
			// Unterminated: Scriggo reports it; do not touch it.
			out.WriteString(text[open:])
			break
		}
		body := text[open+2 : closeAt]
		leftTrim := strings.HasPrefix(body, "-") && (kind != '{' || len(body) > 1 && strings.ContainsRune(trimText, rune(body[1])))
		rightTrim := len(body) > 0 && body[len(body)-1] == '-' && (len(body) > 1 || !leftTrim)
		if leftTrim {
			out.trimEnd()
			body = " " + body[1:]
		}
		if rightTrim {
			body = body[:len(body)-1] + " "
		}
		out.WriteString(text[open : open+2])
		out.WriteString(body)
		out.WriteString(text[closeAt : closeAt+2])
		i = closeAt + 2
		if kind == '%' && strings.Contains(body, "raw") && rawStart.MatchString(body) {
			// The body of a raw statement is text Scriggo does not parse.
			loc := rawEnd.FindStringIndex(text[i:])
			if loc == nil {
				out.WriteString(text[i:])
				break
			}
			out.WriteString(text[i : i+loc[0]])
			i += loc[0]
			continue
		}
		if rightTrim {
			n := len(text[i:]) - len(strings.TrimLeft(text[i:], trimText))
			out.keepLines(text[i : i+n])
			i += n
		}
	}
	return string(out.b)
}

// trimBuffer is the rewritten template; a left marker truncates it in place.
type trimBuffer struct{ b []byte }

func (o *trimBuffer) WriteString(s string) { o.b = append(o.b, s...) }

// trimEnd removes the whitespace that ends the buffer (the text before a left
// marker), keeping its newlines in a comment.
func (o *trimBuffer) trimEnd() {
	n := len(o.b)
	for n > 0 && strings.IndexByte(trimText, o.b[n-1]) >= 0 {
		n--
	}
	if n == len(o.b) {
		return
	}
	removed := string(o.b[n:])
	o.b = o.b[:n]
	if n > 0 && o.b[n-1] == '{' {
		// Text "{" right before a tag would read as "{{": print it as a value.
		o.b = append(o.b[:n-1], `{{ "{" }}`...)
	}
	o.keepLines(removed)
}

// keepLines writes removed whitespace as a comment when it spans lines, so that
// positions after it keep their line numbers.
func (o *trimBuffer) keepLines(removed string) {
	if strings.Contains(removed, "\n") {
		o.b = append(o.b, "{#"...)
		o.b = append(o.b, removed...)
		o.b = append(o.b, "#}"...)
	}
}

// tagEnd returns the index of the "%}" or "}}" that closes the tag opened at open,
// skipping string literals and, in {{ }}, the braces of composite literals.
func tagEnd(text string, open int, kind byte) int {
	depth := 0
	for j := open + 2; j+1 < len(text); j++ {
		c := text[j]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if j = stringEnd(text, j); j < 0 {
				return -1
			}
		case kind == '%' && c == '%' && text[j+1] == '}':
			return j
		case kind == '{' && c == '{':
			depth++
		case kind == '{' && c == '}' && depth > 0:
			depth--
		case kind == '{' && c == '}' && text[j+1] == '}':
			return j
		}
	}
	return -1
}

// stringEnd returns the index of the quote closing the literal that starts at i.
func stringEnd(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			return j
		case '\n':
			if q != '`' {
				return -1
			}
		}
	}
	return -1
}

// commentEnd returns the index of the "#}" that closes the comment opened at open;
// comments nest.
func commentEnd(text string, open int) int {
	depth := 0
	for j := open + 2; j+1 < len(text); j++ {
		switch {
		case text[j] == '{' && text[j+1] == '#':
			depth++
			j++
		case text[j] == '#' && text[j+1] == '}':
			if depth == 0 {
				return j
			}
			depth--
			j++
		}
	}
	return -1
}
