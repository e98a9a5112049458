package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/haproxy-haptic/haptic/internal/agent"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

var ingressesGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}

// fakeAPI is an API server for the whole controller: client-go's fake clientset
// (pods, Secrets, Events, Deployments), a dynamic fake (the config, watched
// resources, status, HAProxyCfg) that gives every write a new resourceVersion as the
// API server does, and a metadata fake.
type fakeAPI struct {
	kube *fake.Clientset
	dyn  *dynamicfake.FakeDynamicClient
	meta *metadatafake.FakeMetadataClient
}

func newFakeAPI(t *testing.T, kubeObjs ...runtime.Object) *fakeAPI {
	t.Helper()
	lists := map[schema.GroupVersionResource]string{
		ConfigGVR:    "HAProxyTemplateConfigList",
		ingressesGVR: "IngressList",
		{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}:               "IngressClassList",
		{Version: "v1", Resource: "services"}:                                                 "ServiceList",
		{Version: "v1", Resource: "secrets"}:                                                  "SecretList",
		{Version: "v1", Resource: "namespaces"}:                                               "NamespaceList",
		{Version: "v1", Resource: "configmaps"}:                                               "ConfigMapList",
		{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}:                "EndpointSliceList",
		{Group: "haproxy-haptic.org", Version: "v1alpha1", Resource: "haproxycfgs"}:           "HAProxyCfgList",
		{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}: "CustomResourceDefinitionList",
	}
	for _, r := range []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "listenersets", "backendtlspolicies"} {
		lists[schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: r}] = r + "List"
	}
	lists[schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1beta1", Resource: "referencegrants"}] = "ReferenceGrantList"
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists)
	var rv atomic.Int64
	bump := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if o, ok := a.(interface{ GetObject() runtime.Object }); ok {
			if u, ok := o.GetObject().(*unstructured.Unstructured); ok {
				u.SetResourceVersion(fmt.Sprint(rv.Add(1)))
			}
		}
		return false, nil, nil
	}
	dyn.PrependReactor("create", "*", bump)
	dyn.PrependReactor("update", "*", bump)
	ms := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(ms)
	kube := fake.NewSimpleClientset(kubeObjs...)
	// Discovery serves what the dynamic fake lists: the watch skips anything else.
	byGV := map[string]*metav1.APIResourceList{}
	for gvr := range lists {
		gv := gvr.GroupVersion().String()
		if byGV[gv] == nil {
			byGV[gv] = &metav1.APIResourceList{GroupVersion: gv}
			kube.Resources = append(kube.Resources, byGV[gv])
		}
		byGV[gv].APIResources = append(byGV[gv].APIResources, metav1.APIResource{Name: gvr.Resource})
	}
	return &fakeAPI{kube: kube, dyn: dyn, meta: metadatafake.NewSimpleMetadataClient(ms)}
}

func (f *fakeAPI) clients() clients {
	return clients{kube: f.kube, dyn: f.dyn, meta: f.meta, statusDyn: f.dyn}
}

func (f *fakeAPI) create(t *testing.T, gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	t.Helper()
	if _, err := f.dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startAgent runs the real haptic-agent with a real HAProxy in-process and returns
// its layout and the port its API listens on (127.0.0.1).
func startAgent(t *testing.T, ctx context.Context) (bundle.Layout, int) {
	t.Helper()
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy is not installed: make test installs it")
	}
	dir := t.TempDir()
	layout := bundle.Layout{
		ConfigFile: filepath.Join(dir, "etc", "haproxy.cfg"), MapsDir: filepath.Join(dir, "etc", "maps"),
		SSLCertsDir: filepath.Join(dir, "etc", "ssl"), GeneralStorageDir: filepath.Join(dir, "etc", "general"),
	}
	a, err := agent.New(agent.Options{Layout: layout, StateDir: filepath.Join(dir, "state"),
		ReloadVerificationTimeout: 10 * time.Second, Username: "u", Password: "p",
		StatusAddress: "127.0.0.1", StatusPort: freePort(t), StopTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		_ = a.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return layout, p
}

// loopConfig is an HAProxyTemplateConfig whose HAProxy answers /<name> with the
// name of each Ingress.
func loopConfig(layout bundle.Layout, agentPort, frontendPort int) *unstructured.Unstructured {
	tmpl := fmt.Sprintf(`global
    hard-stop-after 5s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend f
    bind 127.0.0.1:%d
{%% for _, ing := range resources.Ingresses.List() %%}
    http-request return status 200 content-type text/plain lf-string {{ lf_word(ing.Metadata.Name, "metadata.name") }} if { path {{ cfg_word("/" + ing.Metadata.Name, "metadata.name") }} }
{%% end %%}
    http-request return status 404
`, frontendPort)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyTemplateConfig",
		"metadata": map[string]any{"namespace": "haptic", "name": "haptic-config", "generation": int64(1)},
		"spec": map[string]any{
			"credentialsSecretRef": map[string]any{"name": "agent-credentials"},
			"podSelector":          map[string]any{"matchLabels": map[string]any{"app": "haproxy"}},
			"dataplane": map[string]any{"port": int64(agentPort), "minDeploymentInterval": "100ms",
				"configFile": layout.ConfigFile, "mapsDir": layout.MapsDir, "sslCertsDir": layout.SSLCertsDir,
				"generalStorageDir": layout.GeneralStorageDir},
			"haproxyConfig": map[string]any{"template": tmpl},
			"watchedResources": map[string]any{
				"ingresses": map[string]any{"apiVersion": "networking.k8s.io/v1", "resources": "ingresses",
					"indexBy": []any{"metadata.namespace", "metadata.name"}},
			},
		},
	}}
}

func ingressObject(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"namespace": "apps", "name": name},
		"spec":     map[string]any{"ingressClassName": "haptic"}}}
}

// TestWholeLoop runs the controller in-process against a fake API server and the
// real agent with HAProxy: a watched object's change ends in a bundle that HAProxy
// serves, and every resource is watched by one informer.
func TestWholeLoop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	layout, agentPort := startAgent(t, ctx)
	frontend := freePort(t)
	api := newFakeAPI(t,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "haptic", Name: "agent-credentials"},
			Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "haptic", Name: "haproxy-0", Labels: map[string]string{"app": "haproxy"}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1"}})
	api.create(t, ingressesGVR, ingressObject("first"))
	api.create(t, ConfigGVR, loopConfig(layout, agentPort, frontend))

	haproxy, _ := exec.LookPath("haproxy")
	c, err := newWithClients(Options{Namespace: "haptic", ConfigName: "haptic-config", HAProxyBinary: haproxy,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, api.clients())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.run(ctx) }()

	answers := func(name string, code int) func() bool {
		return func() bool {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/%s", frontend, name))
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode == code && (code != 200 || strings.TrimSpace(string(body)) == name)
		}
	}
	serves := func(name string) func() bool { return answers(name, 200) }
	eventually(t, "HAProxy serves the Ingress that existed at start", serves("first"))

	// A change of a watched object ends in a deployed bundle.
	api.create(t, ingressesGVR, ingressObject("second"))
	eventually(t, "HAProxy serves the Ingress created while running", serves("second"))
	if err := api.dyn.Resource(ingressesGVR).Namespace("apps").Delete(ctx, "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "HAProxy no longer serves the deleted Ingress", answers("first", 404))
	if !serves("second")() {
		t.Fatal("the remaining Ingress is not served")
	}

	// Render, status and provisioning read one set of informers: Ingresses are both
	// rendered and given status, and are watched once.
	it := c.current.Load()
	if it == nil || it.informers.Load() == nil {
		t.Fatal("no running iteration with informers")
	}
	set := it.informers.Load()
	for gvr, n := range set.Started() {
		if n != 1 {
			t.Errorf("%s: %d informers", gvr.Resource, n)
		}
	}
	if p, ok := set.Plans()[ingressesGVR]; !ok || !p.Shared {
		t.Errorf("ingresses: %+v (ok %v), want one informer shared by the store and status", p, ok)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the controller did not stop")
	}
	// What run started ends with it: the Events broadcaster's goroutines too (a
	// process that runs controllers in turn, as the end-to-end tests do, kept them).
	eventually(t, "the Events broadcaster stopped", func() bool {
		buf := make([]byte, 1<<20)
		return !strings.Contains(string(buf[:goruntime.Stack(buf, true)]), "tools/record.(*eventBroadcasterImpl)")
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
