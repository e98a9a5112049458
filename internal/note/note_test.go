package note

import (
	"reflect"
	"testing"
)

func TestSortedOrdersAndDeduplicates(t *testing.T) {
	a := Note{Kind: "Gateway", Namespace: "b", Name: "gw", Section: "http", Reason: "PortUnavailable", Message: "port 80 belongs to gateway a/gw"}
	b := Note{Kind: "Gateway", Namespace: "a", Name: "gw", Section: "tcp", Reason: "UnsupportedProtocol", Message: "protocol TCP is not supported"}
	in := []Note{a, b, a}
	got := Sorted(in)
	if want := []Note{b, a}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Sorted = %v, want %v", got, want)
	}
	if in[0] != a || in[1] != b {
		t.Fatal("Sorted modified its input")
	}
	if Sorted(nil) != nil {
		t.Fatal("Sorted(nil) is not nil")
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		n    Note
		want string
	}{
		{Note{Kind: "Gateway", Namespace: "apps", Name: "gw", Section: "web", Reason: "PortUnavailable", Message: "port 80 belongs to gateway default/old"},
			"Gateway apps/gw [web] PortUnavailable: port 80 belongs to gateway default/old"},
		{Note{Kind: "GatewayClass", Name: "haptic", Reason: "Invalid", Message: "x"}, "GatewayClass haptic Invalid: x"},
	} {
		if got := tc.n.String(); got != tc.want {
			t.Errorf("String = %q, want %q", got, tc.want)
		}
	}
}
