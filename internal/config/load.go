package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
)

// Error is a config that cannot be used; Problems lists every reason.
type Error struct {
	Source   string
	Problems []string
}

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("%s: %s", e.Source, e.Problems[0])
	}
	return fmt.Sprintf("%s: %d problems:\n  - %s", e.Source, len(e.Problems), strings.Join(e.Problems, "\n  - "))
}

// LoadFiles reads, merges, decodes, defaults and validates config files. "-" reads
// standard input.
func LoadFiles(paths ...string) (*v1alpha1.HAProxyTemplateConfig, error) {
	merged, err := MergeFiles(paths...)
	if err != nil {
		return nil, err
	}
	return Decode(strings.Join(paths, "+"), merged)
}

// MergeFiles reads config files and merges their documents in order, as LoadFiles
// does, without decoding: the result is the one resource the files describe.
func MergeFiles(paths ...string) (map[string]any, error) {
	if len(paths) == 0 {
		return nil, errors.New("no config file given")
	}
	var merged map[string]any
	for _, p := range paths {
		data, err := readFile(p)
		if err != nil {
			return nil, err
		}
		docs, err := configDocuments(p, data)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			merged = Merge(merged, d)
		}
	}
	return merged, nil
}

// Parse decodes one file's content (which may hold several documents).
func Parse(source string, data []byte) (*v1alpha1.HAProxyTemplateConfig, error) {
	docs, err := configDocuments(source, data)
	if err != nil {
		return nil, err
	}
	var merged map[string]any
	for _, d := range docs {
		merged = Merge(merged, d)
	}
	return Decode(source, merged)
}

func readFile(p string) ([]byte, error) {
	if p == "-" {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return data, nil
}

// configDocuments splits YAML documents and keeps those of kind HAProxyTemplateConfig.
func configDocuments(source string, data []byte) ([]map[string]any, error) {
	var out []map[string]any
	for i, doc := range splitYAML(data) {
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var m map[string]any
		if err := yaml.UnmarshalStrict(doc, &m); err != nil {
			return nil, &Error{Source: source, Problems: []string{fmt.Sprintf("document %d: malformed YAML: %v", i+1, err)}}
		}
		if m == nil {
			continue
		}
		kind, _ := m["kind"].(string)
		if kind != v1alpha1.KindHAProxyTemplateConfig {
			continue
		}
		if av, _ := m["apiVersion"].(string); av != v1alpha1.GroupVersion.String() {
			return nil, &Error{Source: source, Problems: []string{fmt.Sprintf("document %d: apiVersion %q is not supported, want %s", i+1, av, v1alpha1.GroupVersion)}}
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, &Error{Source: source, Problems: []string{fmt.Sprintf("no %s document found (apiVersion %s)", v1alpha1.KindHAProxyTemplateConfig, v1alpha1.GroupVersion)}}
	}
	return out, nil
}

func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		trimmed := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(trimmed, []byte("---")) || bytes.HasPrefix(trimmed, []byte("--- ")) {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			continue
		}
		cur.Write(line)
	}
	return append(docs, cur.Bytes())
}

func stripComments(doc []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out.Write(t)
		}
	}
	return out.Bytes()
}

// Merge deep-merges src into dst: maps merge key by key, anything else is replaced.
func Merge(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				dst[k] = Merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// Decode strictly decodes a merged document, then defaults and validates it.
func Decode(source string, doc map[string]any) (*v1alpha1.HAProxyTemplateConfig, error) {
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var cfg v1alpha1.HAProxyTemplateConfig
	strictErrs, err := sigsjson.UnmarshalStrict(data, &cfg, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, &Error{Source: source, Problems: []string{decodeProblem(err)}}
	}
	var problems []string
	for _, e := range strictErrs {
		problems = append(problems, e.Error())
	}
	if len(problems) > 0 {
		return nil, &Error{Source: source, Problems: problems}
	}
	cfg.Default()
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, &Error{Source: source, Problems: fieldProblems(errs)}
	}
	return &cfg, nil
}

func decodeProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Sprintf("%s: want %s, got JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
	}
	return err.Error()
}

func fieldProblems(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}
