package pipeline

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/internal/benchmix"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/store"
	"github.com/haproxy-haptic/haptic/internal/webhook"
)

// TestIncrementalClientCASwitch: a Gateway whose client CA moves from a ConfigMap
// to a TLS Secret's ca.crt renders the new CA incrementally as in full.
func TestIncrementalClientCASwitch(t *testing.T) {
	p := benchPipeline(t, benchmix.HTTPRoute)
	live := store.NewLive(p.Builder)
	put := func(res string, obj map[string]any) {
		t.Helper()
		if _, err := live.Update(res, obj); err != nil {
			t.Fatal(err)
		}
	}
	for res, objs := range benchmix.Build(benchmix.HTTPRoute, 3) {
		for _, o := range objs {
			put(res, o)
		}
	}
	ns := benchmix.Namespace
	// Two CAs; the first also signs the listener's certificate.
	first, err := webhook.NewCertificate([]string{"gw.example.com"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	second, err := webhook.NewCertificate([]string{"gw.example.com"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	gwCrt, gwKey, ca1, ca2 := string(first.Cert), string(first.Key), string(first.CA), string(second.CA)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	put("secrets", map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{"name": "gw-tls", "namespace": ns},
		"data":     map[string]any{"tls.crt": b64(gwCrt), "tls.key": b64(gwKey)}})
	put("config-maps", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "ca1", "namespace": ns}, "data": map[string]any{"ca.crt": ca1}})
	gateway := func(kind, name string) map[string]any {
		gw := benchmix.Gateway()
		spec := gw["spec"].(map[string]any)
		spec["listeners"] = append(spec["listeners"].([]any), map[string]any{"name": "https", "port": int64(443), "protocol": "HTTPS",
			"tls": map[string]any{"certificateRefs": []any{map[string]any{"name": "gw-tls"}}}})
		spec["tls"] = map[string]any{"frontend": map[string]any{"default": map[string]any{"validation": map[string]any{
			"caCertificateRefs": []any{map[string]any{"group": "", "kind": kind, "name": name}}}}}}
		return gw
	}
	put("gateways", gateway("ConfigMap", "ca1"))

	full, err := p.compile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	prev := live.Snapshot()
	check := func(step, wantCA string) {
		t.Helper()
		snap := live.Snapshot()
		in := render.Input{Snapshot: snap, ExtraContext: benchExtra(benchmix.HTTPRoute), LeaveOut: true, Suspects: snap.Changed(prev)}
		prev = snap
		got, err := p.Engine.Render(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		in.Fresh = true
		want, err := full.Render(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		var ca string
		for i, f := range want.Bundle.Files {
			if g := got.Bundle.Files[i]; g.Target() != f.Target() || g.Content.String() != f.Content.String() {
				t.Fatalf("%s: %s differs from a full render", step, f.Target())
			}
			if strings.HasSuffix(f.Name, "-client-ca.pem") {
				ca = f.Content.String()
			}
		}
		if strings.TrimSpace(ca) != strings.TrimSpace(wantCA) {
			t.Fatalf("%s: client CA file\n%s\nwant\n%s", step, ca, wantCA)
		}
	}
	check("ConfigMap CA", ca1)
	put("secrets", map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{"name": "ca2", "namespace": ns},
		"data":     map[string]any{"tls.crt": b64(gwCrt), "tls.key": b64(gwKey), "ca.crt": b64(ca2)}})
	check("Secret created", ca1)
	put("gateways", gateway("Secret", "ca2"))
	check("Gateway names the Secret", ca2)
}
