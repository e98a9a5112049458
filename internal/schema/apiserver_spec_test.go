package schema

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMatchesAPIServerSpec loads the OpenAPI v3 documents that Kubernetes publishes
// for the k8s.io/api version in go.mod (api/openapi-spec/v3 of k8s.io/kubernetes, when
// that module is in the local module cache) and checks that every real apiserver
// document loads, and that the generated bundled schemas give the very same Go types.
func TestMatchesAPIServerSpec(t *testing.T) {
	dir := apiserverSpecDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no documents in %s (%v)", dir, err)
	}
	real := NewRegistry()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := real.LoadDocument(filepath.Base(f), data); err != nil {
			t.Error(err)
		}
	}
	if _, ok := real.ForResource("apps/v1", "deployments"); !ok {
		t.Error("apps/v1 deployments not found in the apiserver documents")
	}
	b := bundled(t)
	for _, typ := range b.Types() {
		if strings.Contains(typ.APIVersion, "gateway.networking") {
			continue
		}
		want, ok := real.ForResource(typ.APIVersion, typ.Resource)
		if !ok {
			t.Errorf("apiserver spec has no %s %s", typ.APIVersion, typ.Resource)
			continue
		}
		if want.Go != typ.Go {
			t.Errorf("%s %s: bundled type differs from the apiserver's:\n%s\n%s", typ.APIVersion, typ.Kind, typ.Go, want.Go)
		}
	}
	// The CRD schema type is recursive: it must load and be cut, not loop.
	crd, ok := real.ForResource("apiextensions.k8s.io/v1", "customresourcedefinitions")
	if !ok {
		t.Fatal("no CustomResourceDefinition type")
	}
	if !strings.Contains(crd.Go.String(), "map[string]interface {}") {
		t.Errorf("JSONSchemaProps recursion not cut: %s", crd.Go)
	}
}

// apiserverSpecDir returns the OpenAPI v3 documents Kubernetes publishes for the
// version of k8s.io/api in go.mod, downloading the k8s.io/kubernetes module through
// the module proxy when it is not cached yet (the local cluster's build needs it too).
func apiserverSpecDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/api").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	v := strings.TrimSpace(string(out)) // k8s.io/api v0.X.Y is Kubernetes v1.X.Y
	if !strings.HasPrefix(v, "v0.") {
		t.Fatalf("unexpected k8s.io/api version %q", v)
	}
	mod := "k8s.io/kubernetes@v1." + v[3:]
	dl, err := exec.Command("go", "mod", "download", "-json", mod).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", mod, err, dl)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(dl, &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download %s: no module directory in %s", mod, dl)
	}
	return filepath.Join(info.Dir, "api", "openapi-spec", "v3")
}
