package render

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// normalize makes rendered output independent of template whitespace: lines are
// trimmed at the end, runs of blank lines collapse, and haproxy.cfg gets canonical
// indentation (sections at column 0, one blank line before each, directives indented
// by four spaces; config.IsSectionKeyword says what starts a section). Maps and
// crt-lists lose blank lines and indentation entirely. General files and
// certificates are kept as rendered apart from trailing blanks.
func normalize(kind bundle.Kind, s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var out []string
	switch kind {
	case bundle.KindConfig:
		for _, l := range lines {
			t := strings.TrimSpace(l)
			if t == "" {
				continue
			}
			word, _, _ := strings.Cut(t, " ")
			if config.IsSectionKeyword(word) {
				if len(out) > 0 {
					out = append(out, "")
				}
				out = append(out, t)
				continue
			}
			if strings.HasPrefix(t, "#") && len(out) == 0 {
				out = append(out, t)
				continue
			}
			out = append(out, "    "+t)
		}
	case bundle.KindMap, bundle.KindCrtList:
		for _, l := range lines {
			if t := strings.TrimSpace(l); t != "" {
				out = append(out, t)
			}
		}
	case bundle.KindCert:
		for _, l := range lines {
			if t := strings.TrimSpace(l); t != "" {
				out = append(out, t)
			}
		}
	default:
		blank := false
		for _, l := range lines {
			l = strings.TrimRight(l, " \t")
			if l == "" {
				if blank || len(out) == 0 {
					continue
				}
				blank = true
			} else {
				blank = false
			}
			out = append(out, l)
		}
		for len(out) > 0 && out[len(out)-1] == "" {
			out = out[:len(out)-1]
		}
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
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
