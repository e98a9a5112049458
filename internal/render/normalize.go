package render

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// normalize makes rendered output independent of template whitespace: lines are
// trimmed at the end, runs of blank lines collapse, and haproxy.cfg gets canonical
// indentation (sections at column 0, one blank line before each, directives indented
// by four spaces; config.IsSectionKeyword says what starts a section). Maps and
// crt-lists lose blank lines and indentation entirely. General files and
// certificates are kept as rendered apart from trailing blanks.
func normalize(kind bundle.Kind, s string) string {
	if (kind == bundle.KindMap || kind == bundle.KindCrtList || kind == bundle.KindCert) && linesNormal(s) {
		return s // a large map is checked, not copied
	}
	if kind == bundle.KindConfig {
		out, _ := normalizeConfig(s)
		return out
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	switch kind {
	case bundle.KindMap, bundle.KindCrtList, bundle.KindCert:
		for rest := s; rest != ""; {
			var l string
			l, rest = nextLine(rest)
			if t := strings.TrimSpace(l); t != "" {
				b.WriteString(t)
				b.WriteByte('\n')
			}
		}
	default:
		blank := false // a blank line is pending: written before the next non-blank one
		for rest := s; rest != ""; {
			var l string
			l, rest = nextLine(rest)
			l = strings.TrimRight(l, " \t")
			if l == "" {
				blank = b.Len() > 0
				continue
			}
			if blank {
				b.WriteByte('\n')
				blank = false
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// normalizeEdited is normalize(kind, s) for a map rendered again after last, a
// map that was its own normal form: the lines s shares with last at its start and
// end are normal already, so only the lines between are checked. (A map of
// thousands of routes changes in a few lines; the scan of every line was a fifth of
// a change's render.)
func normalizeEdited(kind bundle.Kind, s, last bundle.Text) bundle.Text {
	if kind == bundle.KindMap || kind == bundle.KindCrtList || kind == bundle.KindCert {
		prefix, suffix := bundle.CommonLines(s, last)
		if linesNormal(s.Slice(prefix, s.Len()-suffix)) {
			return s
		}
	}
	return bundle.TextOf(normalize(kind, s.String()))
}

// linesNormal reports whether every line of s is non-blank and has no white space
// at either end, and s ends with a newline (or is empty): what normalize makes of a
// map. A line edge of a byte from 0x80 up (maybe a Unicode space) says no.
func linesNormal(s string) bool {
	edge := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c >= 0x80 }
	for rest := s; rest != ""; {
		i := strings.IndexByte(rest, '\n')
		if i <= 0 || edge(rest[0]) || edge(rest[i-1]) {
			return false // no final newline, an empty line, or blanks to trim
		}
		rest = rest[i+1:]
	}
	return true
}

// nextLine splits s at its first newline.
func nextLine(s string) (line, rest string) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

type postProcessor struct {
	re      *regexp.Regexp
	replace string
}

func (p postProcessor) apply(s string) string { return p.re.ReplaceAllString(s, p.replace) }

func compilePostProcessors(pps []v1alpha1.PostProcessor) ([]postProcessor, error) {
	out := make([]postProcessor, 0, len(pps))
	for i, pp := range pps {
		re, err := regexp.Compile("(?m)" + pp.Params["pattern"])
		if err != nil {
			return nil, fmt.Errorf("postProcessing[%d].params.pattern: %w", i, err)
		}
		out = append(out, postProcessor{re: re, replace: pp.Params["replace"]})
	}
	return out, nil
}
