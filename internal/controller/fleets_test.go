package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/provision"
	"github.com/haproxy-haptic/haptic/internal/publish"
	"github.com/haproxy-haptic/haptic/internal/status/writer"
)

// TestProgrammedPerFleet: fleets that render an identical bundle (e.g. two new
// Gateways before the stores hold them) keep what each rendered; a deploy to one
// fleet's pod programs only the Gateways that fleet serves.
func TestProgrammedPerFleet(t *testing.T) {
	status := writer.New(writer.Options{})
	it := &iteration{d: deps{status: status}, fleets: fleetSet{perGateway: true, status: status}}
	def := &fleet{}
	a := &fleet{gateway: types.NamespacedName{Namespace: "ns", Name: "a"}}
	b := &fleet{gateway: types.NamespacedName{Namespace: "ns", Name: "b"}}
	revs := func(f *fleet, uid string, gen int64) map[types.NamespacedName]writer.Revision {
		return map[types.NamespacedName]writer.Revision{f.gateway: {UID: types.UID(uid), Generation: gen}}
	}
	it.statusRendered(a, "same", revs(a, "uid-a", 1))
	it.statusRendered(b, "same", revs(b, "uid-b", 1))
	it.statusDeployed(def, deploy.Outcome{Pod: "haproxy-0", Hash: "same"})
	if len(it.fleets.programmed) != 0 {
		t.Fatalf("a deploy to the podSelector's pod programmed %v", it.fleets.programmed)
	}
	it.statusDeployed(a, deploy.Outcome{Pod: "haproxy-gw-a-0", Hash: "same"})
	if got, want := fmt.Sprint(it.fleets.programmed), fmt.Sprint(revs(a, "uid-a", 1)); got != want {
		t.Fatalf("programmed = %s, want %s", got, want)
	}
	// A later deploy of an older bundle of the same object does not go back; a
	// Gateway created again under the name replaces the record.
	it.statusRendered(a, "newer", revs(a, "uid-a", 2))
	it.statusRendered(a, "recreated", revs(a, "uid-a2", 1))
	it.statusDeployed(a, deploy.Outcome{Hash: "newer"})
	it.statusDeployed(a, deploy.Outcome{Hash: "same"})
	if got := it.fleets.programmed[a.gateway]; got != (writer.Revision{UID: "uid-a", Generation: 2}) {
		t.Fatalf("after an older deploy: %+v", got)
	}
	it.statusDeployed(a, deploy.Outcome{Hash: "recreated"})
	if got := it.fleets.programmed[a.gateway]; got != (writer.Revision{UID: "uid-a2", Generation: 1}) {
		t.Fatalf("after the new object's deploy: %+v", got)
	}
	// Many new Gateways render at once (the conformance suite's): the bundles of the
	// others do not push a fleet's out before its pod takes it.
	var many []*fleet
	for i := range 40 {
		f := &fleet{gateway: types.NamespacedName{Namespace: "ns", Name: fmt.Sprint("g", i)}}
		it.statusRendered(f, fmt.Sprint("bundle-", i), revs(f, fmt.Sprint("uid-g", i), 1))
		many = append(many, f)
	}
	it.statusDeployed(many[0], deploy.Outcome{Hash: "bundle-0"})
	if got := it.fleets.programmed[many[0].gateway]; got != (writer.Revision{UID: "uid-g0", Generation: 1}) {
		t.Fatalf("the first of 40 fleets rendering at once: %+v", got)
	}
	// Shared: the podSelector's pods serve every Gateway.
	it.fleets.perGateway = false
	it.statusRendered(def, "shared", map[types.NamespacedName]writer.Revision{b.gateway: {UID: "uid-b", Generation: 1}})
	it.statusDeployed(def, deploy.Outcome{Hash: "shared"})
	if got := it.fleets.programmed[b.gateway]; got != (writer.Revision{UID: "uid-b", Generation: 1}) {
		t.Fatalf("shared: %+v", it.fleets.programmed)
	}
}

// TestFleetSetFollowsGateways: with per-Gateway provisioning a Gateway of our class
// gets its Deployment, Service and a fleet; a Gateway that is gone loses them.
func TestFleetSetFollowsGateways(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	api := newFakeAPI(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "haptic", Name: "haproxy"}})
	gatewaysGVR := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	classesGVR := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
	api.create(t, classesGVR, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": "haptic", "uid": "gc"},
		"spec":     map[string]any{"controllerName": "haproxy-haptic.org/gateway-controller"}}})
	api.create(t, gatewaysGVR, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"namespace": "apps", "name": "web", "uid": "gw-web", "generation": int64(1)},
		"spec": map[string]any{"gatewayClassName": "haptic",
			"listeners": []any{map[string]any{"name": "http", "port": int64(80), "protocol": "HTTP"}}}}})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	status := writer.New(writer.Options{Dynamic: api.dyn, Metadata: api.meta, Log: log,
		ControllerName: "haproxy-haptic.org/gateway-controller"})
	go func() { _ = status.Run(ctx) }()
	eventually(t, "the status writer synced", status.Synced)

	var started, stopped []string
	fs := &fleetSet{perGateway: true, podSelector: map[string]string{"app": "haproxy"}, status: status, log: log,
		prov:    &provision.Provisioner{Kube: api.kube, Namespace: "haptic", PodSelector: map[string]string{"app": "haproxy"}, Log: log},
		stopped: func(f *fleet) { stopped = append(stopped, f.gateway.String()) },
		retry:   func() { t.Error("a retry was asked for") },
	}
	fs.start = func(_ context.Context, gw types.NamespacedName, sel map[string]string, infra provision.Infra) *fleet {
		started = append(started, gw.String())
		f := &fleet{gateway: gw, selector: sel, infra: infra, cancel: func() {},
			pub: publish.New(publish.Options{Client: api.dyn, Namespace: "haptic", Config: "haptic-config", Name: "gw-" + gw.Name})}
		fs.add(f)
		return f
	}
	web := types.NamespacedName{Namespace: "apps", Name: "web"}
	gws := status.Gateways()
	if len(gws) != 1 {
		t.Fatalf("gateways %v", gws)
	}
	fs.sync(ctx, gws)
	fs.sync(ctx, gws) // unchanged: nothing more
	if fmt.Sprint(started) != "[apps/web]" || fs.get(web) == nil {
		t.Fatalf("started %v", started)
	}
	deployment := "haproxy-gw-" + provision.GatewayID(web)
	if _, err := api.kube.AppsV1().Deployments("haptic").Get(ctx, deployment, metav1.GetOptions{}); err != nil {
		t.Fatalf("the Gateway's Deployment: %v", err)
	}
	if _, err := api.kube.CoreV1().Services("apps").Get(ctx, "web-haproxy", metav1.GetOptions{}); err != nil {
		t.Fatalf("the Gateway's Service: %v", err)
	}
	// The fleet's pods become the Service's endpoints.
	fs.setGatewayPods(ctx, fs.get(web), []deploy.Pod{{Name: "haproxy-gw-0", IP: "10.244.0.9"}})
	eps, err := api.kube.DiscoveryV1().EndpointSlices("apps").Get(ctx, "web-haproxy", metav1.GetOptions{})
	if err != nil || len(eps.Endpoints) != 1 || eps.Endpoints[0].Addresses[0] != "10.244.0.9" {
		t.Fatalf("endpoints %+v %v", eps, err)
	}

	fs.sync(ctx, map[types.NamespacedName]int64{})
	if fmt.Sprint(stopped) != "[apps/web]" || fs.get(web) != nil {
		t.Fatalf("stopped %v", stopped)
	}
	if _, err := api.kube.AppsV1().Deployments("haptic").Get(ctx, deployment, metav1.GetOptions{}); err == nil {
		t.Fatal("the Deployment of a Gateway that is gone is still there")
	}
}
