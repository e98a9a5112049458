package schema

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

func TestLoadDir(t *testing.T) {
	r := NewRegistry()
	if err := r.LoadDir("testdata/schemas"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, typ := range r.Types() {
		got = append(got, typ.APIVersion+" "+typ.Kind+" "+typ.Resource)
	}
	// Multi-document CRD file: served versions only, spec.names.plural as given.
	// OpenAPI document: kinds with one GVK (not DeleteOptions), plurals guessed.
	want := []string{
		"example.com/v1 Gizmo gizmos",
		"example.com/v1 GizmoList gizmolists",
		"example.com/v1 Octopus octopi",
		"example.com/v1 Widget widgets",
		"example.com/v1beta1 Widget widgets",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("types:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, ok := r.ForKind("example.com/v1alpha1", "Widget"); ok {
		t.Error("unserved version registered")
	}
	// The CRD's versions are distinct types.
	v1, _ := r.ForKind("example.com/v1", "Widget")
	v1beta1, _ := r.ForResource("example.com/v1beta1", "widgets")
	if v1.Go == v1beta1.Go {
		t.Error("v1 and v1beta1 share a type")
	}
	if f, _ := v1beta1.Go.FieldByName("Spec"); f.Type.String() != `*struct { Size string "json:\"size\"" }` {
		t.Errorf("v1beta1 spec = %s", f.Type)
	}
	// A preserve-unknown-fields root is still a struct with typed metadata.
	oct, _ := r.ForKind("example.com/v1", "Octopus")
	want1 := `struct { ApiVersion string "json:\"apiVersion\""; Kind string "json:\"kind\""; Metadata `
	if !strings.HasPrefix(oct.Go.String(), want1) || !strings.HasSuffix(oct.Go.String(), `Spec map[string]interface {} "json:\"spec\"" }`) {
		t.Errorf("Octopus = %s", oct.Go)
	}
	// apiserver document: allOf-wrapped refs, int-or-string, Time, byte, RawExtension, names.
	giz, _ := r.ForKind("example.com/v1", "Gizmo")
	spec, _ := giz.Go.FieldByName("Spec")
	wantSpec := `*struct { Limits map[string]string "json:\"limits\""; Payload string "json:\"payload\""; Port string "json:\"port\""; Raw map[string]interface {} "json:\"raw\""; ` +
		`Replicas int "json:\"replicas\""; Schema *struct { Items map[string]interface {} "json:\"items\""; ` +
		`Properties map[string]map[string]interface {} "json:\"properties\""; Type string "json:\"type\"" } "json:\"schema\""; ` +
		`Since string "json:\"since\""; XFoo string "json:\"x-foo\"" }`
	if spec.Type.String() != wantSpec {
		t.Errorf("Gizmo spec =\n%s\nwant\n%s", spec.Type, wantSpec)
	}
}

func TestLoadDocumentErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"not a schema", "kind: ConfigMap\n", `load x: neither an OpenAPI v3 document nor a CustomResourceDefinition (kind "ConfigMap")`},
		{"bad yaml", "a: [", "load x: yaml document 1:"},
		{"bad json", `{"components":`, "load x: decode:"},
		{"second doc", "kind: CustomResourceDefinition\nspec: {names: {kind: A}}\n---\nkind: Other\n", "load x: document 2: neither"},
		{"unresolved ref", `{"components":{"schemas":{"A":{"type":"object","properties":{"b":{"$ref":"#/components/schemas/B"}},
			"x-kubernetes-group-version-kind":[{"group":"","version":"v1","kind":"A"}]}}}}`, `load x: A: b: unresolved $ref "B"`},
		{"list of other kinds", `{"kind":"List","items":[{"kind":"ConfigMap"}]}`, `load x: items[0]: kind "ConfigMap" is not a CustomResourceDefinition`},
		{"crd without kind", "kind: CustomResourceDefinition\nspec: {group: a}\n", "load x: CustomResourceDefinition without spec.names.kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			err := r.LoadDocument("x", []byte(tc.data))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v, want prefix %q", err, tc.want)
			}
			if len(r.Types()) != 0 {
				t.Error("a failed document registered types")
			}
		})
	}
	if err := NewRegistry().LoadDir("testdata/missing"); err == nil || !strings.Contains(err.Error(), "testdata/missing") {
		t.Errorf("missing dir: %v", err)
	}
}

func TestLaterLoadOverrides(t *testing.T) {
	r := bundled(t)
	doc := `{"components":{"schemas":{"io.k8s.api.core.v1.Service":{"type":"object","properties":{"spec":{"type":"object"}},
		"x-kubernetes-group-version-kind":[{"group":"","version":"v1","kind":"Service"}]}}}}`
	if err := r.LoadDocument("live.json", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	svc := mustType(t, r, "v1", "services")
	if svc.Go.String() != `struct { Spec map[string]interface {} "json:\"spec\"" }` {
		t.Errorf("override not applied: %s", svc.Go)
	}
}

func TestBundled(t *testing.T) {
	r := bundled(t)
	for _, tc := range []struct{ apiVersion, resource, kind string }{
		{"v1", "services", "Service"},
		{"v1", "secrets", "Secret"},
		{"v1", "configmaps", "ConfigMap"},
		{"v1", "pods", "Pod"},
		{"v1", "endpoints", "Endpoints"},
		{"v1", "namespaces", "Namespace"},
		{"discovery.k8s.io/v1", "endpointslices", "EndpointSlice"},
		{"networking.k8s.io/v1", "ingresses", "Ingress"},
		{"networking.k8s.io/v1", "ingressclasses", "IngressClass"},
		{"gateway.networking.k8s.io/v1", "gatewayclasses", "GatewayClass"},
		{"gateway.networking.k8s.io/v1beta1", "gatewayclasses", "GatewayClass"},
		{"gateway.networking.k8s.io/v1", "gateways", "Gateway"},
		{"gateway.networking.k8s.io/v1", "httproutes", "HTTPRoute"},
		{"gateway.networking.k8s.io/v1beta1", "httproutes", "HTTPRoute"},
		{"gateway.networking.k8s.io/v1", "grpcroutes", "GRPCRoute"},
		{"gateway.networking.k8s.io/v1beta1", "referencegrants", "ReferenceGrant"},
		{"gateway.networking.k8s.io/v1alpha3", "tlsroutes", "TLSRoute"},
		{"gateway.networking.k8s.io/v1alpha3", "backendtlspolicies", "BackendTLSPolicy"},
		{"gateway.networking.k8s.io/v1alpha2", "tlsroutes", "TLSRoute"},
		{"gateway.networking.k8s.io/v1alpha2", "tcproutes", "TCPRoute"},
		{"gateway.networking.k8s.io/v1alpha2", "udproutes", "UDPRoute"},
		{"gateway.networking.k8s.io/v1", "backendtlspolicies", "BackendTLSPolicy"},
		{"gateway.networking.k8s.io/v1", "tlsroutes", "TLSRoute"},
		{"gateway.networking.k8s.io/v1", "listenersets", "ListenerSet"},
	} {
		typ, ok := r.ForResource(tc.apiVersion, tc.resource)
		if !ok {
			t.Errorf("no %s %s", tc.apiVersion, tc.resource)
			continue
		}
		if typ.Kind != tc.kind {
			t.Errorf("%s %s is %s, want %s", tc.apiVersion, tc.resource, typ.Kind, tc.kind)
		}
		if k, _ := r.ForKind(tc.apiVersion, tc.kind); k != typ {
			t.Errorf("ForKind(%s, %s) differs from ForResource", tc.apiVersion, tc.kind)
		}
	}
}

// TestBundledUpToDate regenerates the bundled schemas and compares them with the
// committed ones, so a go.mod bump cannot leave them stale.
func TestBundledUpToDate(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command("go", "run", "../../tools/genschemas", "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator unavailable here (%v): %s", err, b)
	}
	for _, name := range []string{"openapi-api-v1.json", "gateway.networking.k8s.io_httproutes.yaml", "meta/objectmeta.json"} {
		want, err := os.ReadFile("bundled/" + name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(out + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("bundled/%s is stale: run go generate ./internal/schema", name)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	r := bundled(t)
	obj := loadYAML(t, "testdata/ingress.yaml")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				typ, ok := r.ForResource("networking.k8s.io/v1", "ingresses")
				if !ok {
					t.Error("lookup failed")
					return
				}
				if _, err := typ.Convert(obj); err != nil {
					t.Error(err)
					return
				}
				if i == 0 {
					_ = r.LoadDocument("svc.json", []byte(`{"components":{"schemas":{}}}`))
				}
			}
		}()
	}
	wg.Wait()
}

// TestNoClientGo keeps the package usable from render/snapshot layers.
func TestNoClientGo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/client-go") || strings.HasPrefix(dep, "k8s.io/api/") {
			t.Errorf("internal/schema depends on %s", dep)
		}
	}
}

func TestLoadDocumentForms(t *testing.T) {
	const crdJSON = `{"kind":"CustomResourceDefinition","spec":{"group":"example.com","names":{"kind":"Thing","plural":"things"},
		"versions":[{"name":"v1","served":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
		"properties":{"n":{"type":"integer"}}}}}}}]}}`
	for _, tc := range []struct{ name, data, apiVersion, resource string }{
		{"CRD as JSON", crdJSON, "example.com/v1", "things"},
		{"CRD list (kubectl get crd -o json)", `{"apiVersion":"v1","kind":"List","items":[` + crdJSON + `]}`, "example.com/v1", "things"},
		{"CustomResourceDefinitionList", `{"kind":"CustomResourceDefinitionList","items":[` + crdJSON + `]}`, "example.com/v1", "things"},
		{"OpenAPI document as YAML", "openapi: 3.0.0\ncomponents:\n  schemas:\n    a.B:\n      type: object\n      properties:\n        spec:\n          type: object\n" +
			"      x-kubernetes-group-version-kind:\n      - {group: example.com, version: v2, kind: Box}\n", "example.com/v2", "boxes"},
		{"Swagger 2 definitions", `{"swagger":"2.0","definitions":{"a.B":{"type":"object","properties":{"spec":{"$ref":"#/definitions/a.S"}},
			"x-kubernetes-group-version-kind":[{"group":"","version":"v1","kind":"Policy"}]},"a.S":{"type":"object","properties":{"x":{"type":"string"}}}}}`,
			"v1", "policies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			if err := r.LoadDocument("doc", []byte(tc.data)); err != nil {
				t.Fatal(err)
			}
			if _, ok := r.ForResource(tc.apiVersion, tc.resource); !ok {
				t.Errorf("no %s %s; have %d types", tc.apiVersion, tc.resource, len(r.Types()))
			}
		})
	}
}
