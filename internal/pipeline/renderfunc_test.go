package pipeline

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/benchmix"
)

// The jsonpath context of a validation test holds its fixture objects as written,
// a copy apart from the objects the render admitted.
func TestRenderFuncDocHoldsFixtures(t *testing.T) {
	p := benchPipeline(t, benchmix.Ingress)
	test := v1alpha1.ValidationTest{Fixtures: map[string][]runtime.RawExtension{"services": {{Raw: []byte(
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"ports":[{"name":"http","port":80}]}}`)}}}}
	_, doc, err := p.RenderFunc(nil)(context.Background(), "doc", test)
	if err != nil {
		t.Fatal(err)
	}
	svcs, _ := doc["resources"].(map[string]any)["services"].([]any)
	if len(svcs) != 1 {
		t.Fatalf("resources.services = %v, want the one fixture", doc["resources"])
	}
	meta, _ := svcs[0].(map[string]any)["metadata"].(map[string]any)
	if meta["name"] != "web" || meta["namespace"] != "shop" {
		t.Errorf("resources.services[0].metadata = %v", meta)
	}
}
