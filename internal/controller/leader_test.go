package controller

import (
	"context"
	"io"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestLabelLeader(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "haptic-0", Namespace: "haptic",
		Labels: map[string]string{"app": "haptic", leaderLabel: "true"}}})
	c := &Controller{d: deps{kube: kube, log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		opts: Options{Namespace: "haptic", PodName: "haptic-0"}}
	labels := func() map[string]string {
		p, err := kube.CoreV1().Pods("haptic").Get(ctx, "haptic-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Labels
	}
	c.labelLeader(ctx, false) // a restarted replica starts as a follower
	if l := labels(); l[leaderLabel] != "" || l["app"] != "haptic" {
		t.Fatalf("after start: %v", l)
	}
	c.labelLeader(ctx, true)
	if l := labels(); l[leaderLabel] != "true" || l["app"] != "haptic" {
		t.Fatalf("after leading: %v", l)
	}
	c.opts.PodName = "" // outside a pod: nothing to label, no error
	c.labelLeader(ctx, false)
	if l := labels(); l[leaderLabel] != "true" {
		t.Fatalf("a replica without a pod name changed a pod: %v", l)
	}
}
