package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	// Imported so that the module stays in go.mod (go mod tidy) and the CRDs read
	// can be checked against the pinned version.
	"sigs.k8s.io/gateway-api/pkg/consts"
)

// gatewayCRDGlobs selects the bundled Gateway API CRDs: every standard-group kind
// (GatewayClass, Gateway, HTTPRoute, GRPCRoute, ReferenceGrant, ListenerSet,
// TLSRoute, TCPRoute, UDPRoute, BackendTLSPolicy). ListenerSet moved from the
// experimental group (XListenerSet) to the standard one in v1.5.
var gatewayCRDGlobs = []string{
	"gateway.networking.k8s.io_*.yaml",
}

// notCRDs are files the globs match that hold no CRD: the v1.5+ safe-upgrades
// ValidatingAdmissionPolicy ships beside the CRDs.
var notCRDs = map[string]bool{
	"gateway.networking.k8s.io_vap_safeupgrades.yaml": true,
}

// droppedSchemaKeys are schema keywords the type builder does not read and that make
// up most of the CRDs' size.
var droppedSchemaKeys = []string{"description", "x-kubernetes-validations"}

func gatewayCRDs(dir string, files map[string][]byte) error {
	var paths []string
	for _, g := range gatewayCRDGlobs {
		m, err := filepath.Glob(filepath.Join(dir, g))
		if err != nil {
			return fmt.Errorf("glob %s: %w", g, err)
		}
		for _, p := range m {
			if !notCRDs[filepath.Base(p)] {
				paths = append(paths, p)
			}
		}
	}
	if len(paths) == 0 {
		return fmt.Errorf("no Gateway API CRDs in %s", dir)
	}
	sort.Strings(paths)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read CRD: %w", err)
		}
		out, err := trimCRDs(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		files[strings.TrimSuffix(filepath.Base(p), ".yaml")+".yaml"] = out
	}
	return nil
}

// trimCRDs keeps what a schema loader needs from each CRD document: identity,
// names, versions and their schemas without descriptions or CEL rules.
func trimCRDs(data []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out bytes.Buffer
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		if doc == nil {
			continue
		}
		if doc["kind"] != "CustomResourceDefinition" {
			return nil, fmt.Errorf("unexpected kind %v", doc["kind"])
		}
		trimmed, err := trimCRD(doc)
		if err != nil {
			return nil, err
		}
		if out.Len() > 0 {
			out.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&out)
		enc.SetIndent(2)
		if err := enc.Encode(trimmed); err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
	}
	return out.Bytes(), nil
}

func trimCRD(doc map[string]any) (map[string]any, error) {
	meta, _ := doc["metadata"].(map[string]any)
	spec, _ := doc["spec"].(map[string]any)
	if meta == nil || spec == nil {
		return nil, errors.New("CRD without metadata or spec")
	}
	keptMeta := map[string]any{"name": meta["name"]}
	ann, _ := meta["annotations"].(map[string]any)
	if v := ann[consts.BundleVersionAnnotation]; v != consts.BundleVersion {
		return nil, fmt.Errorf("CRD %v has bundle version %v, want %s (the version in go.mod)", meta["name"], v, consts.BundleVersion)
	}
	if ann != nil {
		kept := map[string]any{}
		for k, v := range ann {
			if strings.HasPrefix(k, "gateway.networking.k8s.io/") {
				kept[k] = v
			}
		}
		keptMeta["annotations"] = kept
	}
	versions, _ := spec["versions"].([]any)
	var keptVersions []any
	for _, v := range versions {
		vm, ok := v.(map[string]any)
		if !ok {
			return nil, errors.New("spec.versions entry is not an object")
		}
		kv := map[string]any{"name": vm["name"], "served": vm["served"], "storage": vm["storage"]}
		if s, ok := vm["schema"].(map[string]any); ok {
			kv["schema"] = map[string]any{"openAPIV3Schema": trimSchema(s["openAPIV3Schema"])}
		}
		keptVersions = append(keptVersions, kv)
	}
	return map[string]any{
		"apiVersion": doc["apiVersion"],
		"kind":       doc["kind"],
		"metadata":   keptMeta,
		"spec": map[string]any{
			"group":    spec["group"],
			"names":    spec["names"],
			"scope":    spec["scope"],
			"versions": keptVersions,
		},
	}, nil
}

// trimSchema drops droppedSchemaKeys from a schema and its subschemas. Property
// names are data, not keywords: a property called "description" stays.
func trimSchema(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(s))
	for k, val := range s {
		switch {
		case contains(droppedSchemaKeys, k):
		case k == "properties" || k == "patternProperties" || k == "definitions":
			props, _ := val.(map[string]any)
			kept := make(map[string]any, len(props))
			for name, p := range props {
				kept[name] = trimSchema(p)
			}
			out[k] = kept
		case k == "items" || k == "additionalProperties" || k == "not":
			out[k] = trimSchema(val)
		case k == "allOf" || k == "anyOf" || k == "oneOf":
			list, _ := val.([]any)
			kept := make([]any, len(list))
			for i, p := range list {
				kept[i] = trimSchema(p)
			}
			out[k] = kept
		default:
			out[k] = val
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
