package store

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// screen finds the first string of an object that no output context can hold: one
// with a control character (NUL, newline, carriage return, tab, ...). No field of the
// kinds templates read has a use for one, and any of them would end a configuration
// line, a map line or a runtime command, so such an object is refused before a
// template sees it, whatever the templates do with it.
//
// Free-form text is exempt where it is legitimately multi-line and no template is
// expected to print it raw: the data of Secrets and ConfigMaps, managedFields, and
// annotations of other tools (only haproxy-haptic.org/ annotations are read), and
// those of ours that are lists of lines: request-/response-set-header (one header per
// line, each written through the writers) and the raw snippets config-* (checked line
// by line by the library's snippet guard). resource is the API resource (secrets, ingresses, ...).
// It returns "" or "<field path>: <reason>".
func screen(resource string, raw map[string]any) string {
	if !anyControl(resource, "", raw) {
		return "" // (most objects: no paths built, no keys sorted)
	}
	var found string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		if found != "" {
			return
		}
		switch x := v.(type) {
		case string:
			if reason := config.ControlProblem(x); reason != "" {
				found = fmt.Sprintf("%s: %s", path, reason)
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				if exempt(resource, path, k) {
					continue
				}
				child := joinPath(path, k)
				if reason := config.ControlProblem(k); reason != "" {
					found = fmt.Sprintf("%s: the key %s", child, reason)
					return
				}
				walk(child, x[k])
			}
		case []any:
			for i, e := range x {
				walk(path+"["+strconv.Itoa(i)+"]", e)
			}
		}
	}
	walk("", raw)
	return found
}

// exempt reports whether the field key of the map at path parent is free-form text.
func exempt(resource, parent, key string) bool {
	switch parent {
	case "":
		return (key == "data" || key == "stringData" || key == "binaryData") && (resource == "secrets" || resource == "configmaps")
	case "metadata":
		return key == "managedFields"
	case "metadata.annotations":
		name, ours := strings.CutPrefix(key, "haproxy-haptic.org/")
		return !ours || multiLineAnnotations[name] || strings.HasPrefix(name, "config-")
	}
	return false
}

// anyControl reports whether v holds a string or key with a control character
// outside the exempt fields (parent is v's path while an exemption can apply below
// it, "-" beyond): screen's walk without paths or sorting, for the objects that
// hold none. It finds at least what the walk finds.
func anyControl(resource, parent string, v any) bool {
	switch x := v.(type) {
	case string:
		return config.ControlProblem(x) != ""
	case map[string]any:
		for k, e := range x {
			if exempt(resource, parent, k) {
				continue
			}
			child := "-"
			if parent == "" && k == "metadata" || parent == "metadata" && k == "annotations" {
				child = joinPath(parent, k)
			}
			if config.ControlProblem(k) != "" || anyControl(resource, child, e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if anyControl(resource, "-", e) {
				return true
			}
		}
	}
	return false
}

// multiLineAnnotations of ours hold one entry per line; the library reads them line
// by line and writes each entry through its writers.
var multiLineAnnotations = map[string]bool{"request-set-header": true, "response-set-header": true}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
