package localcluster_test

import (
	"context"
	"net"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// TestCoreDNSAsInConformanceBase runs CoreDNS the way the Gateway API
// conformance base manifests do (image registry.k8s.io/coredns/coredns, the
// Corefile from a ConfigMap mounted at /root): it must become Ready and
// answer on port 53 of its pod IP. Its `forward . 8.8.8.8` never leaves the
// machine: the cluster's namespace has no route out.
func TestCoreDNSAsInConformanceBase(t *testing.T) {
	t.Parallel() // own namespace; process counts are per namespace
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "coredns"},
		Data: map[string]string{"Corefile": ".:53 {\n    forward . 8.8.8.8 9.9.9.9\n    log\n    errors\n}\n" +
			"foo.bar.com:53 {\n  whoami\n}\n"},
	}
	if _, err := ns.Client.CoreV1().ConfigMaps(ns.Name).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	labels := map[string]string{"app": "dns"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "coredns"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:         "coredns",
						Image:        "registry.k8s.io/coredns/coredns:v1.12.2",
						Args:         []string{"-conf", "/root/Corefile"},
						VolumeMounts: []corev1.VolumeMount{{Name: "conf", MountPath: "/root"}},
					}},
					Volumes: []corev1.Volume{{Name: "conf", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "coredns"}}}}},
				},
			},
		},
	}
	if _, err := ns.Client.AppsV1().Deployments(ns.Name).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	pods := waitReadyPods(t, ns, "app=dns", 1, 30*time.Second)
	addr := net.JoinHostPort(pods[0].Status.PodIP, "53")
	dialer := netns.Dialer{Name: c.Config.Netns, Timeout: 2 * time.Second}
	waitFor(t, 10*time.Second, "CoreDNS listening on "+addr, func() (bool, string, error) {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			return false, err.Error(), nil
		}
		conn.Close()
		return true, "", nil
	})
	if p := listPods(t, ns, "app=dns"); len(p) != 1 || p[0].Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("CoreDNS restarted: %+v", p[0].Status.ContainerStatuses)
	}
}
