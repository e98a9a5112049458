package schema

import (
	"strings"
)

// FieldName returns the exported Go field name for a JSON property name, or "" when
// the name has no character usable in a Go identifier.
//
// The first letter is upper-cased (ingressClassName → IngressClassName). Characters
// that are invalid in a Go identifier (anything but ASCII letters, digits and '_')
// split the name into parts, each capitalised (x-foo → XFoo, kubernetes.io/name →
// KubernetesIoName). A name that would still not start with an upper-case letter
// (e.g. 1st, _x) gets an "X" prefix.
func FieldName(jsonName string) string {
	var b strings.Builder
	b.Grow(len(jsonName) + 1)
	upper := true
	for i := 0; i < len(jsonName); i++ {
		c := jsonName[i]
		switch {
		case c >= 'a' && c <= 'z':
			if upper {
				c -= 'a' - 'A'
			}
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		default:
			upper = true
			continue
		}
		upper = false
		if b.Len() == 0 && (c < 'A' || c > 'Z') {
			b.WriteByte('X')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Plural guesses the resource name (lower-case plural) of a kind the way Kubernetes
// tooling does: s, x, z, ch, sh → +es; consonant+y → ies; Endpoints stays endpoints;
// anything else +s. A CRD's spec.names.plural always wins over this guess.
func Plural(kind string) string {
	s := strings.ToLower(kind)
	switch {
	case s == "":
		return ""
	case strings.HasSuffix(s, "endpoints"):
		return s
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "z"),
		strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}
