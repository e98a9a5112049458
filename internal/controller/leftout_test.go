package controller

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/store"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

// One Ingress whose value renders safely but fails haproxy -c (an unknown timeout
// unit) is found among the changed objects; its last good version is deployed with
// the rest.
func TestLeaveOutInvalidFindsTheObjectThatFailsValidation(t *testing.T) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy is not installed: make test installs it")
	}
	cfg := &v1alpha1.HAProxyTemplateConfig{Spec: v1alpha1.HAProxyTemplateConfigSpec{
		HAProxyConfig: v1alpha1.MainTemplate{Template: `global
defaults
  mode http
  timeout client 5s
  timeout connect 5s
  timeout server 5s
frontend f
  bind 127.0.0.1:18080
{% for _, ing := range resources.Ingresses.List() %}
backend {{ ing.Metadata.Namespace }}_{{ ing.Metadata.Name }}
  timeout server {{ cfg_word(ing.Metadata.Annotations["timeout"], "metadata.annotations.timeout") }}
{% end %}
`},
		WatchedResources: map[string]v1alpha1.WatchedResource{
			"ingresses": {APIVersion: "networking.k8s.io/v1", Resources: "ingresses", IndexBy: []string{"metadata.namespace", "metadata.name"}},
		},
	}}
	cfg.Default()
	p, err := pipeline.New(cfg, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, eng := p.Builder, p.Engine
	ing := func(name, timeout string) map[string]any {
		return map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
			"metadata": map[string]any{"namespace": "n", "name": name, "annotations": map[string]any{"timeout": timeout}}}
	}
	live := store.NewLive(b)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		if _, err := live.Put("ingresses", ing(n, "3s")); err != nil {
			t.Fatal(err)
		}
	}
	it := &iteration{engine: eng, checker: &validate.Checker{Layout: render.LayoutOf(&cfg.Spec)}}
	f := &fleet{}
	good := live.Snapshot()
	it.good.remember(f, good, nil)

	// Two changes since the last good bundle: one harmless, one that fails haproxy -c.
	for name, timeout := range map[string]string{"b": "4s", "d": "5 parsecs"} {
		if _, err := live.Put("ingresses", ing(name, timeout)); err != nil {
			t.Fatal(err)
		}
	}
	snap := live.Snapshot()
	prev, suspects := it.good.previous(f, snap)
	if len(suspects) != 2 || prev != good {
		t.Fatalf("suspects: %v", suspects)
	}
	in := render.Input{Snapshot: snap, LeaveOut: true, Suspects: suspects, Fallback: prev}
	res, err := eng.Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkErr := it.checker.Check(context.Background(), res.Bundle)
	if checkErr == nil {
		t.Fatal("the bundle with '5 parsecs' passed haproxy -c")
	}
	fixed := it.leaveOutInvalid(context.Background(), in, checkErr)
	if fixed == nil {
		t.Fatal("no object was found to leave out")
	}
	if len(fixed.LeftOut) != 1 || fixed.LeftOut[0].Key != "n/d" || !strings.Contains(fixed.LeftOut[0].Reason, "fails validation") {
		t.Fatalf("left out: %+v", fixed.LeftOut)
	}
	// d's last good version (3s) keeps serving; b's harmless change is deployed.
	cfgText := fixed.Bundle.Files[0].Content.String()
	if !strings.Contains(cfgText, "backend n_d\n    timeout server 3s") || !strings.Contains(cfgText, "timeout server 4s") ||
		!strings.Contains(fixed.LeftOut[0].Reason, "last good version") {
		t.Fatalf("config:\n%s\nleft out: %+v", cfgText, fixed.LeftOut)
	}

	// Reported once per fleet, forgotten when fixed.
	l := snapshot.LeftOut{Resource: "ingresses", Key: "n/d", Reason: "x"}
	if got := it.good.fresh(f, []snapshot.LeftOut{l}); len(got) != 1 {
		t.Fatalf("first report: %v", got)
	}
	if got := it.good.fresh(f, []snapshot.LeftOut{l}); len(got) != 0 {
		t.Fatalf("reported twice: %v", got)
	}
	it.good.fresh(f, nil)
	if got := it.good.fresh(f, []snapshot.LeftOut{l}); len(got) != 1 {
		t.Fatalf("not reported again after it was fixed and broke again: %v", got)
	}
}
