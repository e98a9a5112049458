package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// node is the subset of an OpenAPI v3 / JSON-schema object that the type builder needs.
// Everything else (descriptions, validations, defaults, enums) is ignored.
type node struct {
	Ref                  string           `json:"$ref"`
	Type                 schemaType       `json:"type"`
	Format               string           `json:"format"`
	Properties           map[string]*node `json:"properties"`
	AdditionalProperties *additional      `json:"additionalProperties"`
	Items                *node            `json:"items"`
	AllOf                []*node          `json:"allOf"`
	AnyOf                []*node          `json:"anyOf"`
	OneOf                []*node          `json:"oneOf"`
	IntOrString          bool             `json:"x-kubernetes-int-or-string"`
	PreserveUnknown      bool             `json:"x-kubernetes-preserve-unknown-fields"`
	GVK                  []gvk            `json:"x-kubernetes-group-version-kind"`
}

type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

func (g gvk) apiVersion() string {
	if g.Group == "" {
		return g.Version
	}
	return g.Group + "/" + g.Version
}

// schemaType accepts both `"type": "object"` and the JSON-schema list form
// `"type": ["string", "null"]` (the first non-null entry wins).
type schemaType string

func (t *schemaType) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var list []string
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("type: %w", err)
		}
		for _, s := range list {
			if s != "null" {
				*t = schemaType(s)
				return nil
			}
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("type: %w", err)
	}
	*t = schemaType(s)
	return nil
}

// additional is `additionalProperties`, which is either a boolean or a schema.
type additional struct {
	Allowed bool
	Schema  *node
}

func (a *additional) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("true")):
		a.Allowed = true
	case bytes.Equal(b, []byte("false")), bytes.Equal(b, []byte("null")):
	default:
		a.Allowed = true
		a.Schema = new(node)
		if err := json.Unmarshal(b, a.Schema); err != nil {
			return fmt.Errorf("additionalProperties: %w", err)
		}
	}
	return nil
}

// refName turns "#/components/schemas/io.k8s.api.core.v1.Service" (or the Swagger 2
// "#/definitions/..." form) into the schema's name.
func refName(ref string) string {
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		return ref[i+1:]
	}
	return ref
}

// openAPIDoc is an apiserver /openapi/v3 document (or a Swagger 2 one with definitions).
type openAPIDoc struct {
	Components struct {
		Schemas map[string]*node `json:"schemas"`
	} `json:"components"`
	Definitions map[string]*node `json:"definitions"`
}

// crd is the part of an apiextensions.k8s.io/v1 CustomResourceDefinition the loader reads.
type crd struct {
	Kind string `json:"kind"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
			Schema *struct {
				OpenAPIV3Schema *node `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// docHeader identifies what a decoded document is.
type docHeader struct {
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
	Components *struct {
		Schemas json.RawMessage `json:"schemas"`
	} `json:"components"`
	Definitions json.RawMessage `json:"definitions"`
}
