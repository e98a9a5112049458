package clustertest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Namespace is a test's own namespace.
type Namespace struct {
	Name   string
	Client kubernetes.Interface
	REST   *rest.Config
}

// NewNamespace creates a namespace for the test (deleted at cleanup) and waits
// until its default ServiceAccount exists, so pods can be created at once.
func (c *Cluster) NewNamespace(t testing.TB) *Namespace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-", Labels: map[string]string{"haptic.test/e2e": "true"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete namespace %s: %v", ns.Name, err)
		}
	})
	for attempt := 0; ; attempt++ {
		_, err := c.Client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			break
		}
		if ctx.Err() != nil || attempt > 300 {
			t.Fatalf("default ServiceAccount in %s: %v", ns.Name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &Namespace{Name: ns.Name, Client: c.Client, REST: c.REST}
}
