package chart

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The chart's values.schema.json and the values table of its README are generated
// from values.yaml: its structure gives the properties (unknown keys rejected), each
// value's type comes from its default, and its "# --" comment is its description.
// What a default cannot say (enums, free-form objects, ranges) is in the tables below.

// freeFormObjects are Kubernetes or user-defined structures the chart passes on
// (any keys; the API server or the config's schema checks them).
var freeFormObjects = []string{"resources", "securityContext", "podSecurityContext", "affinity",
	"namespaceSelector", "extraContext", "spec"}

// stringMaps are maps of strings: annotations, labels, node selectors.
var stringMaps = []string{"annotations", "podAnnotations", "podLabels", "nodeSelector", "labels"}

// stringLists are lists of strings; every other list holds objects.
var stringLists = []string{"watchedResourcesIgnoreFields"}

const durationPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`

// constraints refine the schema of single values, by path.
var constraints = map[string]map[string]any{
	"controller.image.pullPolicy":                         {"enum": []any{"Always", "IfNotPresent", "Never"}},
	"haproxy.image.pullPolicy":                            {"enum": []any{"Always", "IfNotPresent", "Never"}},
	"controller.webhook.failurePolicy":                    {"enum": []any{"Fail", "Ignore"}},
	"controller.webhook.timeoutSeconds":                   {"minimum": 1, "maximum": 30},
	"controller.logLevel":                                 {"enum": []any{"debug", "info", "warn", "error"}},
	"haproxy.agent.logLevel":                              {"enum": []any{"debug", "info", "warn", "error"}},
	"controller.config.gateways.provisioning":             {"enum": []any{"PerGateway", "Shared"}},
	"controller.config.templatingSettings.resourceAccess": {"enum": []any{"", "typed", "untyped"}},
	"haproxy.service.type":                                {"enum": []any{"ClusterIP", "NodePort", "LoadBalancer"}},
	"controller.replicas":                                 {"minimum": 0},
	"haproxy.replicas":                                    {"minimum": 0},
	"haproxy.terminationGracePeriodSeconds":               {"minimum": 0},
	"controller.debugPort":                                {"minimum": 0, "maximum": 65535},
	"haproxy.nbthread":                                    {"type": []any{"integer", "null"}, "minimum": 0},
	"controller.config.name":                              {"minLength": 1},
	"ingressClass.name":                                   {"minLength": 1},
	"gatewayClass.controllerName":                         {"pattern": `^[a-z0-9.-]+/[A-Za-z0-9/._-]+$`},
	"gatewayClass.name":                                   {"minLength": 1},
}

// isPort reports whether the value at path is a TCP port.
func isPort(path string) bool {
	last := path[strings.LastIndex(path, ".")+1:]
	return path != "controller.debugPort" && (strings.Contains(path, ".ports.") || strings.HasSuffix(last, "Port") || last == "port")
}

// isDuration reports whether the value at path is a Go duration.
func isDuration(path string) bool {
	return strings.HasPrefix(path, "controller.config.dataplane.") || strings.HasSuffix(path, ".interval")
}

// schemaValue is one value of values.yaml with its schema, for the README table.
type schemaValue struct {
	path, typ, def string
}

// generateSchema builds values.schema.json from values.yaml; undocumented lists the
// values without a "# --" description.
func generateSchema(valuesYAML []byte) (schema map[string]any, values []schemaValue, undocumented []string, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(valuesYAML, &doc); err != nil {
		return nil, nil, nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, nil, fmt.Errorf("values.yaml: not a mapping")
	}
	g := &schemaGen{}
	root := g.object(doc.Content[0], "")
	if g.err != nil {
		return nil, nil, nil, g.err
	}
	root["$schema"] = "https://json-schema.org/draft-07/schema#"
	root["title"] = "Values of the haptic chart"
	root["description"] = "Generated from values.yaml (internal/chart TestValuesSchema -update); do not edit."
	return root, g.values, g.undocumented, nil
}

type schemaGen struct {
	values       []schemaValue
	undocumented []string
	err          error
}

// comment is a key's head comment without the "#" and "--" markers; documented
// says whether it starts with "# --".
func comment(key *yaml.Node) (text string, documented bool) {
	var lines []string
	for _, l := range strings.Split(key.HeadComment, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#"))
		if strings.HasPrefix(l, "--") {
			documented = true
			l = strings.TrimSpace(strings.TrimPrefix(l, "--"))
			lines = lines[:0] // the description starts at "# --"
		}
		if l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, " "), documented
}

func (g *schemaGen) object(n *yaml.Node, prefix string) map[string]any {
	props := map[string]any{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		path := strings.TrimPrefix(prefix+"."+key.Value, ".")
		text, documented := comment(key)
		s := g.value(val, path, key.Value)
		if text != "" {
			s["description"] = text
		}
		if _, nested := s["properties"]; !nested && !documented {
			g.undocumented = append(g.undocumented, path)
		}
		props[key.Value] = s
	}
	return map[string]any{"type": "object", "additionalProperties": false, "properties": props}
}

func (g *schemaGen) value(n *yaml.Node, path, name string) map[string]any {
	var s map[string]any
	switch {
	case n.Kind == yaml.MappingNode && slices.Contains(freeFormObjects, name):
		s = map[string]any{"type": "object"}
	case n.Kind == yaml.MappingNode && slices.Contains(stringMaps, name):
		s = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	case n.Kind == yaml.MappingNode:
		return g.object(n, path)
	case n.Kind == yaml.SequenceNode && slices.Contains(stringLists, name):
		s = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	case n.Kind == yaml.SequenceNode:
		s = map[string]any{"type": "array", "items": map[string]any{"type": "object"}}
	case n.Kind == yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			s = map[string]any{"type": "string"}
		case "!!bool":
			s = map[string]any{"type": "boolean"}
		case "!!int":
			s = map[string]any{"type": "integer"}
		case "!!float":
			s = map[string]any{"type": "number"}
		case "!!null":
			s = map[string]any{}
		}
	}
	if s == nil {
		g.err = fmt.Errorf("values.yaml %s: no schema for a %v %s", path, n.Kind, n.Tag)
		return map[string]any{}
	}
	if isPort(path) {
		s["minimum"], s["maximum"] = 1, 65535
	}
	if isDuration(path) {
		s["pattern"] = durationPattern
	}
	for k, v := range constraints[path] {
		s[k] = v
	}
	if _, typed := s["type"]; !typed {
		g.err = fmt.Errorf("values.yaml %s: a null default needs a type in constraints", path)
	}
	var def any
	if err := n.Decode(&def); err != nil {
		g.err = err
	}
	g.values = append(g.values, schemaValue{path: path, typ: typeName(s), def: compactJSON(def)})
	return s
}

func typeName(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		if e, ok := s["enum"].([]any); ok {
			var names []string
			for _, v := range e {
				names = append(names, fmt.Sprintf("%q", v))
			}
			return strings.Join(names, " \\| ")
		}
		if t == "array" {
			return "array of " + s["items"].(map[string]any)["type"].(string)
		}
		return t
	case []any:
		var names []string
		for _, v := range t {
			names = append(names, v.(string))
		}
		return strings.Join(names, " or ")
	}
	return ""
}

func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "?"
	}
	return strings.TrimSpace(b.String())
}

// Markers of the generated part of charts/haptic/README.md.
const (
	valuesBegin = "<!-- values:begin (generated from values.schema.json by internal/chart TestValuesSchema -update) -->"
	valuesEnd   = "<!-- values:end -->"
)

// valuesTable is the README's values reference.
func valuesTable(values []schemaValue, schema map[string]any) string {
	var b strings.Builder
	b.WriteString("| Value | Type | Default | Description |\n|---|---|---|---|\n")
	for _, v := range values {
		desc := lookupDescription(schema, v.path)
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", v.path, v.typ, strings.ReplaceAll(v.def, "|", "\\|"),
			strings.NewReplacer("|", "\\|", "<", "&lt;").Replace(desc))
	}
	return b.String()
}

// lookupDescription is the description of the value at a dotted path.
func lookupDescription(schema map[string]any, path string) string {
	s := schema
	for _, part := range strings.Split(path, ".") {
		props, _ := s["properties"].(map[string]any)
		s, _ = props[part].(map[string]any)
	}
	d, _ := s["description"].(string)
	return d
}

// replaceSection replaces what lies between the values markers of a README.
func replaceSection(readme, table string) (string, error) {
	i, j := strings.Index(readme, valuesBegin), strings.Index(readme, valuesEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("README: the markers %q and %q are missing", valuesBegin, valuesEnd)
	}
	return readme[:i+len(valuesBegin)] + "\n" + table + readme[j:], nil
}
