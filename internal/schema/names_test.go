package schema

import "testing"

func TestFieldName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ingressClassName", "IngressClassName"},
		{"metadata", "Metadata"},
		{"apiVersion", "ApiVersion"},
		{"clusterIP", "ClusterIP"},
		{"Already", "Already"},
		{"x-foo", "XFoo"},
		{"kubernetes.io/service-name", "KubernetesIoServiceName"},
		{"foo_bar", "Foo_bar"},
		{"$ref", "Ref"},
		{"1st", "X1st"},
		{"_hidden", "X_hidden"},
		{"a..b", "AB"},
		{"über", "Ber"},
		{"-", ""},
		{"", ""},
	} {
		if got := FieldName(tc.in); got != tc.want {
			t.Errorf("FieldName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Ingress", "ingresses"},
		{"IngressClass", "ingressclasses"},
		{"Service", "services"},
		{"Endpoints", "endpoints"},
		{"EndpointSlice", "endpointslices"},
		{"Policy", "policies"},
		{"BackendTLSPolicy", "backendtlspolicies"},
		{"Gateway", "gateways"},
		{"Key", "keys"},
		{"Box", "boxes"},
		{"Quiz", "quizes"},
		{"Patch", "patches"},
		{"Mesh", "meshes"},
		{"HTTPRoute", "httproutes"},
		{"", ""},
	} {
		if got := Plural(tc.in); got != tc.want {
			t.Errorf("Plural(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
