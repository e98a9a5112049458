package publish

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/deploy"
)

func fakeClient() *dynamicfake.FakeDynamicClient {
	cfg := &unstructured.Unstructured{}
	cfg.SetAPIVersion(v1alpha1.GroupVersion.String())
	cfg.SetKind(v1alpha1.KindHAProxyTemplateConfig)
	cfg.SetNamespace("ns")
	cfg.SetName("haptic-config")
	cfg.SetUID("uid-1")
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		GVR: "HAProxyCfgList", configGVR: "HAProxyTemplateConfigList",
	}, cfg)
}

// writes lists the write actions (verb/subresource) since the last call.
type recorder struct {
	c    *dynamicfake.FakeDynamicClient
	seen int
}

func (r *recorder) writes() []string {
	acts := r.c.Actions()
	var out []string
	for _, a := range acts[r.seen:] {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		v := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			v += "/" + a.GetSubresource()
		}
		out = append(out, v)
	}
	r.seen = len(acts)
	return out
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func bundleN(n int) *bundle.Bundle {
	return bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(fmt.Sprintf("global\n# %d\n", n))},
		{Kind: bundle.KindCert, Name: "site.pem", Content: bundle.TextOf(certPEM)},
	})
}

func get(t *testing.T, c *dynamicfake.FakeDynamicClient) *v1alpha1.HAProxyCfg {
	t.Helper()
	u, err := c.Resource(GVR).Namespace("ns").Get(context.Background(), "haptic-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var obj v1alpha1.HAProxyCfg
	if err := remarshal(u.Object, &obj); err != nil {
		t.Fatal(err)
	}
	return &obj
}

func TestPublisherWritesOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	c := fakeClient()
	rec := &recorder{c: c}
	pods := []string{"hp-0", "hp-1"}
	p := New(Options{Client: c, Namespace: "ns", Config: "haptic-config", Pods: func() []string { return pods }, Log: quietLog()})

	if err := p.flush(ctx); err != nil { // nothing rendered yet: nothing to write
		t.Fatal(err)
	}
	if w := rec.writes(); len(w) != 0 {
		t.Fatalf("writes before a bundle: %v", w)
	}

	b := bundleN(1)
	p.SetDesired(b)
	p.OnOutcome(deploy.Outcome{Pod: "hp-0", Hash: b.Hash, Mode: deploy.ModeReload, Reloaded: true})
	if err := p.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprint(rec.writes()); w != "[create haproxycfgs update haproxycfgs/status]" {
		t.Fatalf("first flush wrote %s", w)
	}
	obj := get(t, c)
	if obj.Spec.Checksum != b.Hash || len(obj.OwnerReferences) != 1 || obj.OwnerReferences[0].UID != "uid-1" {
		t.Fatalf("object = %+v", obj.ObjectMeta)
	}
	if len(obj.Status.Pods) != 1 || obj.Status.Pods[0].Checksum != b.Hash {
		t.Fatalf("status = %+v", obj.Status)
	}

	// The same outcome again, and the same bundle: nothing to write.
	p.SetDesired(b)
	p.OnOutcome(deploy.Outcome{Pod: "hp-0", Hash: b.Hash, Mode: deploy.ModeReload, Reloaded: true})
	if err := p.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w := rec.writes(); len(w) != 0 {
		t.Fatalf("unchanged state written: %v", w)
	}

	// Another pod reports: status only.
	p.OnOutcome(deploy.Outcome{Pod: "hp-1", Hash: b.Hash, Mode: deploy.ModeRuntime})
	if err := p.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprint(rec.writes()); w != "[update haproxycfgs/status]" {
		t.Fatalf("new pod outcome wrote %s", w)
	}

	// A new bundle: spec, then status once its pods run it.
	b2 := bundleN(2)
	p.SetDesired(b2)
	if err := p.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprint(rec.writes()); w != "[update haproxycfgs]" {
		t.Fatalf("new bundle wrote %s", w)
	}
	if obj := get(t, c); obj.Spec.Checksum != b2.Hash {
		t.Fatalf("checksum = %s, want %s", obj.Spec.Checksum, b2.Hash)
	}

	// A pod gone from the fleet leaves the status.
	pods = []string{"hp-1"}
	if err := p.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprint(rec.writes()); w != "[update haproxycfgs/status]" {
		t.Fatalf("pod removal wrote %s", w)
	}
	if st := get(t, c).Status; len(st.Pods) != 1 || st.Pods[0].Name != "hp-1" {
		t.Fatalf("status after removal = %+v", st)
	}
}

// Inputs never block, even when nothing runs the publisher.
func TestPublisherInputsNeverBlock(t *testing.T) {
	p := New(Options{Client: fakeClient(), Namespace: "ns", Config: "haptic-config", Log: quietLog()})
	done := make(chan struct{})
	go func() {
		for i := range 10000 {
			p.SetDesired(bundleN(i % 3))
			p.OnOutcome(deploy.Outcome{Pod: fmt.Sprint("hp-", i%5), Hash: "h", Mode: deploy.ModeRuntime})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("inputs blocked")
	}
	var nilPub *Publisher // the controller may run without one
	nilPub.SetDesired(bundleN(1))
	nilPub.OnOutcome(deploy.Outcome{Pod: "hp"})
}

// Many changes inside the interval make at most one write per interval, and the
// latest bundle wins.
func TestPublisherThrottles(t *testing.T) {
	c := fakeClient()
	var mu sync.Mutex
	var writes []time.Time
	c.PrependReactor("*", "haproxycfgs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetVerb() == "create" || a.GetVerb() == "update" && a.GetSubresource() == "" {
			mu.Lock()
			writes = append(writes, time.Now())
			mu.Unlock()
		}
		return false, nil, nil
	})
	const interval = 300 * time.Millisecond
	p := New(Options{Client: c, Namespace: "ns", Config: "haptic-config", Interval: interval, Log: quietLog()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()

	start := time.Now()
	var last *bundle.Bundle
	for i := 0; time.Since(start) < 4*interval; i++ {
		last = bundleN(i)
		p.SetDesired(last)
		time.Sleep(10 * time.Millisecond)
	}
	deadline := time.Now().Add(5 * interval)
	for get(t, c).Spec.Checksum != last.Hash {
		if time.Now().After(deadline) {
			t.Fatal("the latest bundle was not published")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(writes) < 2 || len(writes) > 6 {
		t.Errorf("%d spec writes for ~%d intervals of changes", len(writes), 4)
	}
	for i := 1; i < len(writes); i++ {
		if gap := writes[i].Sub(writes[i-1]); gap < interval-20*time.Millisecond {
			t.Errorf("writes %d and %d only %v apart (interval %v)", i-1, i, gap, interval)
		}
	}
}

// A Gateway fleet's HAProxyCfg has a name of its own, the config as source and
// owner, and goes away with Delete.
func TestPublisherNamedFleet(t *testing.T) {
	ctx := context.Background()
	c := fakeClient()
	p := New(Options{Client: c, Namespace: "ns", Config: "haptic-config", Name: "haptic-config-gw-abc",
		Labels: map[string]string{"haproxy-haptic.org/gateway": "abc"}, Log: quietLog()})
	p.SetDesired(bundleN(1))
	if err := p.flush(ctx); err != nil {
		t.Fatal(err)
	}
	u, err := c.Resource(GVR).Namespace("ns").Get(ctx, "haptic-config-gw-abc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src, _, _ := unstructured.NestedString(u.Object, "spec", "source")
	if src != "haptic-config" || u.GetLabels()["haproxy-haptic.org/gateway"] != "abc" ||
		len(u.GetOwnerReferences()) != 1 || u.GetOwnerReferences()[0].Name != "haptic-config" {
		t.Fatalf("object = source %q labels %v owners %v", src, u.GetLabels(), u.GetOwnerReferences())
	}
	rec := &recorder{c: c, seen: len(c.Actions())}
	if err := p.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w := rec.writes(); len(w) != 0 {
		t.Fatalf("an up-to-date named HAProxyCfg was rewritten: %v", w)
	}
	if err := p.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resource(GVR).Namespace("ns").Get(ctx, "haptic-config-gw-abc", metav1.GetOptions{}); err == nil {
		t.Fatal("HAProxyCfg still there after Delete")
	}
	if err := p.Delete(ctx); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}
}

// The runtime path first: a write waits for Hold (the controller's delivery of the
// change to the pods) and then carries what arrived meanwhile.
func TestPublisherWaitsForHold(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := fakeClient()
	rec := &recorder{c: c}
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	p := New(Options{Client: c, Namespace: "ns", Config: "haptic-config", Log: quietLog(), Interval: time.Millisecond,
		Hold: func(ctx context.Context) {
			select {
			case held <- struct{}{}:
			default:
			}
			<-release
		}})
	go p.Run(ctx)
	b := bundleN(1)
	p.SetDesired(b)
	<-held
	time.Sleep(50 * time.Millisecond)
	if w := rec.writes(); len(w) != 0 {
		t.Fatalf("wrote while held: %v", w)
	}
	p.OnOutcome(deploy.Outcome{Pod: "hp-0", Hash: b.Hash, Mode: deploy.ModeRuntime})
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if len(get0(c)) == 1 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no write with the pod's outcome after the hold")
}

// get0 returns the published pods, or nil before the object exists.
func get0(c *dynamicfake.FakeDynamicClient) []v1alpha1.HAProxyCfgPodStatus {
	u, err := c.Resource(GVR).Namespace("ns").Get(context.Background(), "haptic-config", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	var obj v1alpha1.HAProxyCfg
	if remarshal(u.Object, &obj) != nil {
		return nil
	}
	return obj.Status.Pods
}
