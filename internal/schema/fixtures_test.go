package schema

import (
	"reflect"
	"testing"
)

type fieldCheck struct {
	path []any
	want any
}

// convertFixture converts a fixture twice, as decoded from YAML (ints) and from
// JSON (float64s), and checks the same fields on both.
func convertFixture(t *testing.T, apiVersion, resource, file string, checks []fieldCheck) reflect.Value {
	t.Helper()
	typ := mustType(t, bundled(t), apiVersion, resource)
	var last reflect.Value
	for _, src := range []string{"yaml", "json"} {
		obj := loadYAML(t, file)
		if src == "json" {
			obj = viaJSON(t, obj)
		}
		v, err := typ.Convert(obj)
		if err != nil {
			t.Fatalf("%s from %s: %v", file, src, err)
		}
		for _, c := range checks {
			if got := get(t, v, c.path...).Interface(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s from %s: %v = %#v, want %#v", file, src, c.path, got, c.want)
			}
		}
		last = v
	}
	return last
}

func TestConvertIngress(t *testing.T) {
	v := convertFixture(t, "networking.k8s.io/v1", "ingresses", "testdata/ingress.yaml", []fieldCheck{
		{[]any{"ApiVersion"}, "networking.k8s.io/v1"},
		{[]any{"Metadata", "Name"}, "shop"},
		{[]any{"Metadata", "Generation"}, 3},
		{[]any{"Metadata", "CreationTimestamp"}, "2026-11-30T08:15:00Z"},
		{[]any{"Metadata", "Annotations", "[kubernetes.io/ingress.class"}, "haptic"},
		{[]any{"Metadata", "ManagedFields", 0, "FieldsV1", "[f:spec"}, map[string]any{"f:rules": map[string]any{}}},
		{[]any{"Spec", "IngressClassName"}, "haptic"},
		{[]any{"Spec", "Tls", 0, "Hosts"}, []string{"shop.example.com", "www.shop.example.com"}},
		{[]any{"Spec", "Tls", 0, "SecretName"}, "shop-tls"},
		{[]any{"Spec", "Rules", 0, "Host"}, "shop.example.com"},
		{[]any{"Spec", "Rules", 0, "Http", "Paths", 0, "PathType"}, "Prefix"},
		{[]any{"Spec", "Rules", 0, "Http", "Paths", 0, "Backend", "Service", "Name"}, "shop-web"},
		{[]any{"Spec", "Rules", 0, "Http", "Paths", 0, "Backend", "Service", "Port", "Number"}, 80},
		{[]any{"Spec", "Rules", 0, "Http", "Paths", 1, "Backend", "Service", "Port", "Name"}, "http"},
		{[]any{"Spec", "Rules", 1, "Http", "Paths", 0, "Backend", "Resource", "Kind"}, "StorageBucket"},
		{[]any{"Status", "LoadBalancer", "Ingress", 0, "Ip"}, "192.0.2.10"},
		{[]any{"Status", "LoadBalancer", "Ingress", 0, "Ports", 0, "Port"}, 443},
	})
	if !get(t, v, "Spec", "DefaultBackend").IsNil() {
		t.Error("absent defaultBackend should be nil")
	}
	if !get(t, v, "Spec", "Rules", 1, "Http", "Paths", 0, "Backend", "Service").IsNil() {
		t.Error("absent service backend should be nil")
	}
	// Several typed values of the same Ingress type; CreationTimestamp is a plain string.
	if k := get(t, v, "Metadata", "CreationTimestamp").Kind(); k != reflect.String {
		t.Errorf("creationTimestamp is %s", k)
	}
}

func TestConvertService(t *testing.T) {
	convertFixture(t, "v1", "services", "testdata/service.yaml", []fieldCheck{
		{[]any{"Kind"}, "Service"},
		{[]any{"Spec", "Type"}, "ClusterIP"},
		{[]any{"Spec", "ClusterIP"}, "10.96.12.34"},
		{[]any{"Spec", "ClusterIPs"}, []string{"10.96.12.34"}},
		{[]any{"Spec", "Selector"}, map[string]string{"app": "shop", "component": "web"}},
		{[]any{"Spec", "Ports", 0, "Name"}, "http"},
		{[]any{"Spec", "Ports", 0, "Port"}, 80},
		{[]any{"Spec", "Ports", 0, "TargetPort"}, "http"},
		{[]any{"Spec", "Ports", 1, "TargetPort"}, "9100"},
		{[]any{"Spec", "Ports", 1, "AppProtocol"}, "http"},
		{[]any{"Spec", "Ports", 0, "AppProtocol"}, ""},
		{[]any{"Spec", "ExternalTrafficPolicy"}, ""},
	})
}

func TestConvertEndpointSlice(t *testing.T) {
	convertFixture(t, "discovery.k8s.io/v1", "endpointslices", "testdata/endpointslice.yaml", []fieldCheck{
		{[]any{"AddressType"}, "IPv4"},
		{[]any{"Metadata", "Labels", "[kubernetes.io/service-name"}, "shop-web"},
		{[]any{"Metadata", "OwnerReferences", 0, "Controller"}, true},
		{[]any{"Endpoints", 0, "Addresses"}, []string{"10.244.1.7"}},
		{[]any{"Endpoints", 0, "Conditions", "Ready"}, true},
		{[]any{"Endpoints", 1, "Conditions", "Ready"}, false},
		{[]any{"Endpoints", 1, "Conditions", "Terminating"}, true},
		{[]any{"Endpoints", 0, "NodeName"}, "node-a"},
		{[]any{"Endpoints", 0, "TargetRef", "Name"}, "shop-web-6d9f7c-x2k4q"},
		{[]any{"Ports", 0, "Name"}, "http"},
		{[]any{"Ports", 0, "Port"}, 8080},
	})
}

func TestConvertHTTPRoute(t *testing.T) {
	v := convertFixture(t, "gateway.networking.k8s.io/v1", "httproutes", "testdata/httproute.yaml", []fieldCheck{
		{[]any{"Metadata", "Namespace"}, "prod"},
		{[]any{"Spec", "Hostnames"}, []string{"shop.example.com"}},
		{[]any{"Spec", "ParentRefs", 0, "Name"}, "public"},
		{[]any{"Spec", "ParentRefs", 0, "SectionName"}, "https"},
		{[]any{"Spec", "ParentRefs", 0, "Port"}, 0},
		{[]any{"Spec", "Rules", 0, "Matches", 0, "Path", "Type"}, "PathPrefix"},
		{[]any{"Spec", "Rules", 0, "Matches", 0, "Path", "Value"}, "/api"},
		{[]any{"Spec", "Rules", 0, "Matches", 0, "Headers", 0, "Value"}, "true"},
		{[]any{"Spec", "Rules", 0, "Filters", 0, "RequestHeaderModifier", "Set", 0, "Name"}, "x-route"},
		{[]any{"Spec", "Rules", 0, "BackendRefs", 0, "Weight"}, 90},
		{[]any{"Spec", "Rules", 0, "BackendRefs", 1, "Name"}, "shop-api-canary"},
		{[]any{"Spec", "Rules", 0, "Timeouts", "Request"}, "10s"},
		{[]any{"Spec", "Rules", 1, "BackendRefs", 0, "Port"}, 80},
		{[]any{"Status", "Parents", 0, "Conditions", 0, "Status"}, "True"},
		{[]any{"Status", "Parents", 0, "Conditions", 0, "ObservedGeneration"}, 1},
	})
	if !get(t, v, "Spec", "Rules", 1, "Timeouts").IsNil() {
		t.Error("absent timeouts should be nil")
	}
}
