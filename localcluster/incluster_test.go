package localcluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

// TestInClusterAPIAccess: a pod reaches the API server the way client-go's
// in-cluster config does — KUBERNETES_SERVICE_HOST/PORT, the projected
// service-account token and kube-root-ca.crt at
// /var/run/secrets/kubernetes.io/serviceaccount — as the controller will.
func TestInClusterAPIAccess(t *testing.T) {
	t.Parallel() // own namespace; process counts are per namespace
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount"
	script := `curl -sS --cacert ` + sa + `/ca.crt -H "Authorization: Bearer $(cat ` + sa + `/token)" ` +
		`"https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/api/v1/namespaces/$(cat ` + sa + `/namespace)/pods/$HOSTNAME" ` +
		`-o /dev/null -w 'status=%{http_code}\n'; exec sleep 600`
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "incluster", Labels: map[string]string{"app": "incluster"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Containers:                    []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sh", "-c", script}}},
		},
	}
	if _, err := ns.Client.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	waitReadyPods(t, ns, "app=incluster", 1, 30*time.Second)
	logPath := filepath.Join(c.Config.PodsDir(), ns.Name+"_incluster", "main.log")
	// The default ServiceAccount may not read pods (RBAC): 403 proves the token
	// authenticated over verified TLS; 401 or a TLS error would not.
	waitFor(t, 20*time.Second, "an authenticated answer from the API server", func() (bool, string, error) {
		data, _ := os.ReadFile(logPath)
		text := string(data)
		return strings.Contains(text, "status=403") || strings.Contains(text, "status=200"), text, nil
	})
}
