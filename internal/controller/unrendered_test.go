package controller

import (
	"fmt"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

func TestUnrenderedListeners(t *testing.T) {
	cfg := `frontend status
    bind :8404
# gateway default/base-port listener http (port 8080) not rendered: port 8080 is used by the base http frontend
    # gateway apps/young listener web (port 80) not rendered: port 80 belongs to gateway default/z-old
# gateway apps/young listener tcp (port 90) not rendered: protocol TCP is not supported
# gateway apps/young listener tls (port 443) not rendered: its certificate is not resolved
`
	b := bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: cfg}})
	got := fmt.Sprint(unrenderedListeners(b))
	want := "map[apps/young:map[web:port 80 belongs to gateway default/z-old] default/base-port:map[http:port 8080 is used by the base http frontend]]"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
