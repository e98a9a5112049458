package controller

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/status/writer"
	"github.com/haproxy-haptic/haptic/internal/watch"
)

// TestNoResourceWatchedTwice: with the shipped libraries, the stores and the status
// writer (which reads every Gateway API kind, Services, TLS Secrets, Namespaces,
// Ingresses and IngressClasses) share one informer per resource — also where several
// consumers ask differently (a Secrets store, an on-demand one and status's TLS
// Secrets).
func TestNoResourceWatchedTwice(t *testing.T) {
	const dir = "../../charts/haptic/libraries/"
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gateways := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	for _, tc := range []struct {
		name   string
		libs   []string
		shared []schema.GroupVersionResource // read by more than one consumer
	}{
		{"ingress", []string{"base.yaml", "ingress.yaml"}, []schema.GroupVersionResource{secrets, ingressesGVR}},
		{"gateway", []string{"base.yaml", "gateway.yaml"}, []schema.GroupVersionResource{secrets, namespaces, gateways}},
		{"both", []string{"base.yaml", "ingress.yaml", "gateway.yaml"}, []schema.GroupVersionResource{secrets, namespaces, gateways, ingressesGVR}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var paths []string
			for _, l := range tc.libs {
				paths = append(paths, dir+l)
			}
			cfg, err := config.LoadFiles(paths...)
			if err != nil {
				t.Fatal(err)
			}
			api := newFakeAPI(t)
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			d := deps{dyn: api.dyn, meta: api.meta, log: log,
				status: writer.New(writer.Options{Dynamic: api.dyn, SharedInformers: true, Log: log})}
			it, err := prepare(d, cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			w := &watch.Watcher{Dynamic: api.dyn, Metadata: api.meta, Live: it.live, Log: log, Ignore: it.ignore, Notify: func(string) {}}
			set, _, err := it.informerSet(w)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := set.Start(ctx); err != nil {
				t.Fatal(err)
			}
			started := set.Started()
			if len(started) < 8 {
				t.Fatalf("only %d resources watched: %v", len(started), started)
			}
			for gvr, n := range started {
				if n != 1 {
					t.Errorf("%s: %d informers", gvr, n)
				}
			}
			// What the API server sees: one list and one watch per resource,
			// through the dynamic or the metadata client.
			lists := func() map[string]int {
				out := map[string]int{}
				for _, a := range append(api.dyn.Actions(), api.meta.Actions()...) {
					if a.GetVerb() == "list" {
						out[a.GetResource().Resource]++
					}
				}
				return out
			}
			eventually(t, "every informer listed", func() bool { return len(lists()) == len(started) })
			for res, n := range lists() {
				if n != 1 {
					t.Errorf("%s listed %d times", res, n)
				}
			}
			plans := set.Plans()
			for _, gvr := range tc.shared {
				if !plans[gvr].Shared {
					t.Errorf("%s: not shared (%+v)", gvr, plans[gvr])
				}
			}
			// Status needs whole TLS Secrets: the shared informer caches whole
			// objects; its selector is one every consumer accepts.
			if p := plans[secrets]; p.Metadata || p.FieldSelector != "" {
				t.Errorf("secrets: %+v", p)
			}
		})
	}
}
