package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/plan"
	"github.com/haproxy-haptic/haptic/internal/publish"
	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

func TestMain(m *testing.M) { os.Exit(clustertest.Main(m)) }

const (
	configName = "haptic-config"
	secretPEM  = "-----BEGIN PRIVATE KEY-----\nTOP-SECRET-KEY-MATERIAL-0123456789\n-----END PRIVATE KEY-----\n"
	interval   = 500 * time.Millisecond
)

var configGVR = v1alpha1.GroupVersion.WithResource("haproxytemplateconfigs")

// setup installs the CRDs, creates a test namespace with an HAProxyTemplateConfig,
// and returns a dynamic client and the config's UID.
func setup(t *testing.T) (context.Context, dynamic.Interface, string, string) {
	t.Helper()
	ctx, dyn, ns, uid, _ := setupSpec(t, map[string]any{"haproxyConfig": map[string]any{"template": "global\n"}})
	return ctx, dyn, ns, uid
}

// setupSpec is setup with the config's spec.
func setupSpec(t *testing.T, spec map[string]any) (context.Context, dynamic.Interface, string, string, *clustertest.Namespace) {
	t.Helper()
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	if out, err := c.Kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", "../../charts/haptic/crds/"); err != nil {
		t.Fatalf("apply CRDs: %v\n%s", err, out)
	}
	dyn, err := dynamic.NewForConfig(ns.REST)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	cfg.SetAPIVersion(v1alpha1.GroupVersion.String())
	cfg.SetKind(v1alpha1.KindHAProxyTemplateConfig)
	cfg.SetName(configName)
	var created *unstructured.Unstructured
	eventually(t, 30*time.Second, "create the HAProxyTemplateConfig", func() error {
		created, err = dyn.Resource(configGVR).Namespace(ns.Name).Create(ctx, cfg, metav1.CreateOptions{})
		return err
	})
	// A freshly applied CRD takes a moment to serve.
	eventually(t, 30*time.Second, "the HAProxyCfg resource to be served", func() error {
		_, err := dyn.Resource(publish.GVR).Namespace(ns.Name).List(ctx, metav1.ListOptions{})
		return err
	})
	return ctx, dyn, ns.Name, string(created.GetUID()), ns
}

func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func start(ctx context.Context, t *testing.T, dyn dynamic.Interface, ns string, pods []string) *publish.Publisher {
	p := publish.New(publish.Options{Client: dyn, Namespace: ns, Config: configName, Interval: interval,
		Pods: func() []string { return pods }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

func read(ctx context.Context, t *testing.T, dyn dynamic.Interface, ns string) (*v1alpha1.HAProxyCfg, []byte, error) {
	u, err := dyn.Resource(publish.GVR).Namespace(ns).Get(ctx, configName, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	var obj v1alpha1.HAProxyCfg
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return &obj, raw, nil
}

func testBundle(n int) *bundle.Bundle {
	return bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(fmt.Sprintf("global\n    master-worker\n# generation %d\n", n))},
		{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf("echo.localhost be_echo\n")},
		{Kind: bundle.KindCert, Name: "site.pem", Content: bundle.TextOf(secretPEM)},
		{Kind: bundle.KindCrtList, Name: "crt.list", Content: bundle.TextOf("/etc/haproxy/ssl/site.pem\n")},
	})
}

func TestHAProxyCfgPublished(t *testing.T) {
	ctx, dyn, ns, uid := setup(t)
	pods := []string{"haproxy-0", "haproxy-1"}
	p := start(ctx, t, dyn, ns, pods)
	b := testBundle(1)
	p.SetDesired(b)
	p.OnOutcome(deploy.Outcome{Pod: pods[0], Hash: b.Hash, Mode: deploy.ModeReload, Reloaded: true,
		Reasons: []plan.Reason{{Section: "backend be_echo", Detail: "added"}}})
	runtimeApply := deploy.Outcome{Pod: pods[1], Hash: b.Hash, Mode: deploy.ModeRuntime}
	p.OnOutcome(runtimeApply)

	var obj *v1alpha1.HAProxyCfg
	var raw []byte
	eventually(t, 30*time.Second, "HAProxyCfg with the bundle's checksum and both pods", func() error {
		var err error
		if obj, raw, err = read(ctx, t, dyn, ns); err != nil {
			return err
		}
		if obj.Spec.Checksum != b.Hash || len(obj.Status.Pods) != 2 {
			return fmt.Errorf("checksum %s, %d pods", obj.Spec.Checksum, len(obj.Status.Pods))
		}
		return nil
	})
	if obj.Spec.Source != configName || len(obj.OwnerReferences) != 1 || string(obj.OwnerReferences[0].UID) != uid {
		t.Errorf("source %q, owners %+v (config UID %s)", obj.Spec.Source, obj.OwnerReferences, uid)
	}
	if obj.Spec.Config.Checksum != bundle.HashContent(b.Config().Content.String()) || !strings.Contains(obj.Spec.Config.Content, "master-worker") {
		t.Errorf("config = %+v", obj.Spec.Config)
	}
	if len(obj.Spec.Certificates) != 1 || obj.Spec.Certificates[0].Name != "site.pem" ||
		obj.Spec.Certificates[0].Checksum != bundle.HashContent(secretPEM) {
		t.Errorf("certificates = %+v", obj.Spec.Certificates)
	}
	if strings.Contains(string(raw), "TOP-SECRET") || strings.Contains(string(raw), "PRIVATE KEY") {
		t.Fatalf("certificate content reached the API server: %s", raw)
	}
	if ps := obj.Status.Pods[0]; ps.Name != pods[0] || ps.Checksum != b.Hash || ps.LastReloadTime == nil ||
		ps.LastOperation != "reload: backend be_echo: added" || ps.LastError != "" {
		t.Errorf("reloaded pod status = %+v", ps)
	}
	if ps := obj.Status.Pods[1]; ps.Name != pods[1] || ps.Checksum != b.Hash || ps.LastReloadTime != nil ||
		ps.LastOperation != "runtime" || ps.LastError != "" {
		t.Errorf("runtime-applied pod status = %+v", ps)
	}
	if obj.Status.ObservedGeneration != obj.Generation {
		t.Errorf("observedGeneration %d, generation %d", obj.Status.ObservedGeneration, obj.Generation)
	}

	// Unchanged state, offered again and again for several intervals, is not
	// rewritten. (A repeated reload is news: its time changes.)
	w, err := dyn.Resource(publish.GVR).Namespace(ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + configName, ResourceVersion: obj.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for range 30 {
		p.SetDesired(b)
		p.OnOutcome(runtimeApply)
		time.Sleep(interval / 10)
	}
	if n := modifications(w, 3*interval); n != 0 {
		t.Fatalf("unchanged state rewrote the object %d times", n)
	}
	if again, _, err := read(ctx, t, dyn, ns); err != nil || again.ResourceVersion != obj.ResourceVersion {
		t.Fatalf("resourceVersion moved from %s (%v)", obj.ResourceVersion, err)
	}

	// A changed outcome rewrites the status once.
	p.OnOutcome(deploy.Outcome{Pod: "haproxy-1", Hash: "other", Mode: deploy.ModeRuntime, Err: fmt.Errorf("agent answered 500")})
	if n := modifications(w, 3*interval); n != 1 {
		t.Fatalf("a failed apply made %d writes, want 1", n)
	}
	obj, _, err = read(ctx, t, dyn, ns)
	if err != nil {
		t.Fatal(err)
	}
	if ps := obj.Status.Pods[1]; ps.Name != "haproxy-1" || ps.LastError != "agent answered 500" || ps.Checksum != b.Hash {
		t.Errorf("failed pod status = %+v", ps)
	}

	// A new bundle: the spec follows, with a new generation the status observes.
	b2 := testBundle(2)
	p.SetDesired(b2)
	eventually(t, 10*time.Second, "the new checksum", func() error {
		obj, _, err = read(ctx, t, dyn, ns)
		if err != nil {
			return err
		}
		if obj.Spec.Checksum != b2.Hash || obj.Status.ObservedGeneration != obj.Generation {
			return fmt.Errorf("checksum %s, generation %d observed %d", obj.Spec.Checksum, obj.Generation, obj.Status.ObservedGeneration)
		}
		return nil
	})
}

// modifications counts the object's writes seen on w during d.
func modifications(w watch.Interface, d time.Duration) int {
	n := 0
	timeout := time.After(d)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return n
			}
			if ev.Type == watch.Modified {
				n++
			}
		case <-timeout:
			return n
		}
	}
}

// A 5,000-backend configuration is accepted by the API server, compressed.
func TestHAProxyCfg5000Backends(t *testing.T) {
	ctx, dyn, ns, _ := setup(t)
	p := start(ctx, t, dyn, ns, nil)
	b := largeBundle(5000)
	p.SetDesired(b)
	var obj *v1alpha1.HAProxyCfg
	var raw []byte
	eventually(t, 60*time.Second, "the 5,000-backend HAProxyCfg", func() error {
		var err error
		if obj, raw, err = read(ctx, t, dyn, ns); err != nil {
			if apierrors.IsNotFound(err) {
				return err
			}
			t.Fatal(err)
		}
		if obj.Spec.Checksum != b.Hash {
			return fmt.Errorf("checksum %s", obj.Spec.Checksum)
		}
		return nil
	})
	content := 0
	for _, f := range b.Files {
		content += len(f.Content.String())
	}
	t.Logf("5,000 backends: %d bytes rendered; HAProxyCfg as stored: %d bytes (%.1f KiB)", content, len(raw), float64(len(raw))/1024)
	if obj.Spec.Config.Encoding != v1alpha1.EncodingGzipBase64 {
		t.Errorf("config encoding %q", obj.Spec.Config.Encoding)
	}
	got, err := publish.Decode(obj.Spec.Config)
	if err != nil || got != b.Config().Content.String() {
		t.Fatalf("decoded config differs (%d vs %d bytes): %v", len(got), len(b.Config().Content.String()), err)
	}
	if len(raw) > 512<<10 {
		t.Errorf("stored object is %d bytes; want well under 1.5 MiB", len(raw))
	}
	if strings.Contains(string(raw), "TOP-SECRET") {
		t.Fatal("certificate content reached the API server")
	}
}

// largeBundle is a 5,000-backend configuration shaped like the Ingress library's.
func largeBundle(backends int) *bundle.Bundle {
	var cfg, hosts strings.Builder
	cfg.WriteString("global\n    master-worker\n\ndefaults\n    mode http\n    timeout connect 5s\n\nfrontend http\n    bind :8080\n    use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map)]\n\n")
	for i := range backends {
		fmt.Fprintf(&cfg, "backend ing_bench_bench-ing-%d_bench-svc-%d_80\n    mode http\n    balance roundrobin\n    option httpchk GET /healthz\n    default-server check inter 2s fall 3 rise 2\n", i, i)
		fmt.Fprintf(&cfg, "    server SRV_1 10.244.%d.%d:%d weight 100\n    server SRV_2 10.244.%d.%d:%d weight 100\n\n", i/250, i%250, 8080+i%100, i/250, (i+1)%250, 8080+i%100)
		fmt.Fprintf(&hosts, "bench-%d.example.com ing_bench_bench-ing-%d_bench-svc-%d_80\n", i, i, i)
	}
	return bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(cfg.String())},
		{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(hosts.String())},
		{Kind: bundle.KindCert, Name: "site.pem", Content: bundle.TextOf(secretPEM)},
	})
}
