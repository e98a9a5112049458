package render

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/open2b/scriggo/native"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// The writers are the one way a template puts text taken from an object into its
// output, one per output context. Each either writes the text so that it is exactly
// one value in that context or stops the render with an error naming the field; the
// render then leaves the object out (see Engine.Render). Every rendered file is
// checked again afterwards (checkOutput), so a template that forgets a writer cannot
// add a map entry or run past a line either.

func writers() native.Declarations {
	return native.Declarations{
		"cfg_word":      cfgWord,
		"lf_word":       lfWord,
		"map_key":       mapKey,
		"map_value":     mapValue,
		"header_ops":    headerOps,
		"comment":       comment,
		"comment_lines": commentLines,
	}
}

// refuse stops the render: field (e.g. "spec.rules[0].host") could not be written.
func refuse(env native.Env, field string, err error) string {
	msg := err.Error()
	if field != "" {
		msg = field + ": " + msg
	}
	env.Stop(&FailError{Template: env.CallPath(), Message: msg})
	return ""
}

// cfgWord writes s as one word of an haproxy.cfg line.
func cfgWord(env native.Env, s string, field ...string) string {
	out, err := config.QuoteWord(s)
	if err != nil {
		return refuse(env, fieldName(field), err)
	}
	return out
}

// lfWord writes s as one word HAProxy reads as a log-format string ('%' doubled).
func lfWord(env native.Env, s string, field ...string) string {
	out, err := config.QuoteLogFormatWord(s)
	if err != nil {
		return refuse(env, fieldName(field), err)
	}
	return out
}

// mapKey returns s when it is a map key HAProxy reads back whole.
func mapKey(env native.Env, s string, field ...string) string {
	if err := config.CheckMapKey(s); err != nil {
		return refuse(env, fieldName(field), err)
	}
	return s
}

// mapKeyOf is mapKey of a field named "<id>: <field>", joined only when s is
// refused (every route's map lines of a full render pass here).
func mapKeyOf(env native.Env, s, id, field string) string {
	if err := config.CheckMapKey(s); err != nil {
		return refuse(env, id+": "+field, err)
	}
	return s
}

// mapValue returns s when it is a map value HAProxy reads back whole.
func mapValue(env native.Env, s string, field ...string) string {
	if err := config.CheckMapValue(s); err != nil {
		return refuse(env, fieldName(field), err)
	}
	return s
}

// headerOps writes header modifiers ([op, name, value], op set, add or remove) as one
// map value for the gateway library's haptic-headers.lua: "<a|d|s><name>=<value>"
// words (a remove has no value), name and value percent-encoded but for ASCII
// letters, digits and "-._~", sorted by op (add, remove, set) and lower-case name.
func headerOps(env native.Env, ops [][]string, field ...string) string {
	codes := map[string]byte{"add": 'a', "remove": 'd', "set": 's'}
	type word struct {
		code  byte
		lname string
		text  string
	}
	words := make([]word, 0, len(ops))
	for _, op := range ops {
		code, ok := codes[op[0]]
		if len(op) != 3 || !ok {
			return refuse(env, fieldName(field), fmt.Errorf("header modifier %q: want [set|add|remove, name, value]", op))
		}
		value := op[2]
		if code == 'd' {
			value = ""
		}
		words = append(words, word{code, strings.ToLower(op[1]), string(code) + percentEncode(op[1]) + "=" + percentEncode(value)})
	}
	sort.SliceStable(words, func(i, j int) bool {
		if words[i].code != words[j].code {
			return words[i].code < words[j].code
		}
		return words[i].lname < words[j].lname
	})
	texts := make([]string, len(words))
	for i, w := range words {
		texts[i] = w.text
	}
	return mapValue(env, strings.Join(texts, " "), field...)
}

// percentEncode escapes every byte of s but ASCII letters, digits and "-._~".
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// fetchArg returns s when it can be a sample-fetch argument as it is.
func fetchArg(env native.Env, s string, field ...string) string {
	if err := config.CheckFetchArg(s); err != nil {
		return refuse(env, fieldName(field), err)
	}
	return s
}

// comment writes any text inside a comment: quoted, every control character and
// line separator escaped, so it can never end the comment's line.
func comment(v any) string {
	return strconv.Quote(fmt.Sprint(v))
}

// commentLines writes each note as a comment line: prefix and the note as comment
// writes it. (One call for many notes: a template loop costs a native call a line.)
func commentLines(prefix string, notes []string) string {
	var b strings.Builder
	for i, n := range notes {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(prefix)
		b.WriteString(comment(n))
	}
	return b.String()
}

func fieldName(field []string) string {
	if len(field) == 0 {
		return ""
	}
	return field[0]
}

// checkOutput is the last line of defence: whatever the templates did, a rendered
// file must read back in HAProxy as the lines it shows. The message leaves the line
// number out, so that the object diagnosis (which re-renders subsets) can match it.
func checkOutput(kind bundle.Kind, content string) error {
	err := config.Check(kind, content)
	if err == nil {
		return nil
	}
	var le *config.LineError
	if errors.As(err, &le) {
		err = le.Err
	}
	return fmt.Errorf("rendered output is unsafe: %w", err)
}
