package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"go.yaml.in/yaml/v3"
)

// objectMetaRef names the schema that replaces a CRD's `metadata`, as the apiserver
// does when it publishes CRD schemas, so that custom resources get the same typed
// Metadata as built-in kinds.
const objectMetaRef = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// splitDocuments returns each non-empty document of data as JSON. JSON input is a
// single document; YAML input may hold several separated by "---".
func splitDocuments(data []byte) ([]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return []json.RawMessage{trimmed}, nil
	}
	var docs []json.RawMessage
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("yaml document %d: %w", i, err)
		}
		if v == nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("yaml document %d: %w", i, err)
		}
		docs = append(docs, b)
	}
}

// typesFromDocument builds the types of every kind one document defines.
func typesFromDocument(raw json.RawMessage) ([]*Type, error) {
	var h docHeader
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	switch {
	case h.Kind == "CustomResourceDefinition":
		return typesFromCRD(raw)
	case h.Kind == "CustomResourceDefinitionList" || h.Kind == "List":
		var out []*Type
		for i, item := range h.Items {
			var ih docHeader
			if err := json.Unmarshal(item, &ih); err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
			if ih.Kind != "CustomResourceDefinition" && ih.Kind != "" {
				return nil, fmt.Errorf("items[%d]: kind %q is not a CustomResourceDefinition", i, ih.Kind)
			}
			ts, err := typesFromCRD(item)
			if err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
			out = append(out, ts...)
		}
		return out, nil
	case h.Components != nil || h.Definitions != nil:
		return typesFromOpenAPI(raw)
	}
	return nil, fmt.Errorf("neither an OpenAPI v3 document nor a CustomResourceDefinition (kind %q)", h.Kind)
}

// typesFromOpenAPI registers every schema that carries exactly one
// x-kubernetes-group-version-kind. Schemas listing many GVKs (DeleteOptions,
// WatchEvent) are shared helper types, not resources.
func typesFromOpenAPI(raw json.RawMessage) ([]*Type, error) {
	var doc openAPIDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decode OpenAPI document: %w", err)
	}
	schemas := doc.Components.Schemas
	if schemas == nil {
		schemas = doc.Definitions
	}
	meta, err := metaSchemas()
	if err != nil {
		return nil, err
	}
	b := newBuilder(func(name string) *node {
		if n := schemas[name]; n != nil {
			return n
		}
		return meta[name]
	})
	names := make([]string, 0, len(schemas))
	for name, n := range schemas {
		if n != nil && len(n.GVK) == 1 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []*Type
	for _, name := range names {
		g := schemas[name].GVK[0]
		c, _, err := b.buildRef(name, 0)
		if err != nil {
			return nil, err // names the schema already
		}
		if c.kind != kStruct {
			continue // a kind without properties cannot be a typed resource
		}
		out = append(out, &Type{APIVersion: g.apiVersion(), Kind: g.Kind, Resource: Plural(g.Kind),
			Go: c.structType, codec: c})
	}
	return out, nil
}

// typesFromCRD builds one type per served version of a CustomResourceDefinition.
func typesFromCRD(raw json.RawMessage) ([]*Type, error) {
	var d crd
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("decode CustomResourceDefinition: %w", err)
	}
	kind, group := d.Spec.Names.Kind, d.Spec.Group
	if kind == "" {
		return nil, errors.New("CustomResourceDefinition without spec.names.kind")
	}
	plural := d.Spec.Names.Plural
	if plural == "" {
		plural = Plural(kind)
	}
	meta, err := metaSchemas()
	if err != nil {
		return nil, err
	}
	var out []*Type
	for _, v := range d.Spec.Versions {
		if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		root := *v.Schema.OpenAPIV3Schema
		root.PreserveUnknown = false // the root is always a struct with typed metadata
		root.Properties = make(map[string]*node, len(root.Properties)+3)
		for k, p := range v.Schema.OpenAPIV3Schema.Properties {
			root.Properties[k] = p
		}
		root.Properties["apiVersion"] = &node{Type: "string"}
		root.Properties["kind"] = &node{Type: "string"}
		root.Properties["metadata"] = &node{Ref: objectMetaRef}
		b := newBuilder(func(name string) *node { return meta[name] })
		c, _, err := b.build(&root, 0)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, v.Name, err)
		}
		apiVersion := v.Name
		if group != "" {
			apiVersion = group + "/" + v.Name
		}
		out = append(out, &Type{APIVersion: apiVersion, Kind: kind, Resource: plural,
			Go: c.structType, codec: c})
	}
	return out, nil
}

var (
	metaOnce sync.Once
	metaMap  map[string]*node
	metaErr  error
)

// metaSchemas returns ObjectMeta and the schemas it refers to, read once from the
// embedded, generated bundled/meta/objectmeta.json.
func metaSchemas() (map[string]*node, error) {
	metaOnce.Do(func() {
		data, err := bundledFS.ReadFile("bundled/meta/objectmeta.json")
		if err != nil {
			metaErr = fmt.Errorf("read embedded ObjectMeta schema: %w", err)
			return
		}
		var doc openAPIDoc
		if err := json.Unmarshal(data, &doc); err != nil {
			metaErr = fmt.Errorf("decode embedded ObjectMeta schema: %w", err)
			return
		}
		metaMap = doc.Components.Schemas
		if metaMap[objectMetaRef] == nil {
			metaErr = errors.New("embedded ObjectMeta schema lacks " + objectMetaRef)
		}
	})
	return metaMap, metaErr
}
