package render

import (
	"strings"
	"unicode"
)

// ExportedName turns a watched resource name into the field name templates use in the
// typed dialect: "ingresses" → "Ingresses", "http-routes" → "HttpRoutes".
func ExportedName(name string) string {
	var b strings.Builder
	upper := true
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
