package render

import "testing"

func TestNamesKey(t *testing.T) {
	for _, c := range []struct {
		message, key string
		want         bool
	}{
		{"HTTPRoute default/evil: spec.rules[0]: bad", "default/evil", true},
		{"default/evil: bad", "default/evil", true},
		{"route default/evil", "default/evil", true},
		{"HTTPRoute default/evil2: bad", "default/evil", false},
		{"HTTPRoute xdefault/evil: bad", "default/evil", false},
		{"Service default/evil-svc is missing; default/evil: bad", "default/evil", true},
		{"nothing here", "default/evil", false},
	} {
		if got := namesKey(c.message, c.key); got != c.want {
			t.Errorf("namesKey(%q, %q) = %v, want %v", c.message, c.key, got, c.want)
		}
	}
}
