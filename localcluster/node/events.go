package node

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// event records a pod event as the kubelet would (kubectl describe shows
// them). Best effort and asynchronous: an event must never hold up a pod.
func (n *Node) event(pod *corev1.Pod, eventType, reason, message string) {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: pod.Name + ".",
			Namespace:    pod.Namespace,
		},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
			UID: pod.UID, ResourceVersion: pod.ResourceVersion,
		},
		Type:                eventType,
		Reason:              reason,
		Message:             message,
		Source:              corev1.EventSource{Component: "kubelet", Host: n.cfg.NodeName},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		ReportingController: "haptic.io/process-node",
		ReportingInstance:   n.cfg.NodeName,
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := n.client.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			n.logf("event %s for %s/%s: %v", reason, pod.Namespace, pod.Name, err)
		}
	}()
}

// containerEvent records an event about one container of the runner's pod.
func (r *containerRunner) event(eventType, reason, format string, args ...any) {
	pod := r.pod.latest()
	r.pod.node.event(pod, eventType, reason, fmt.Sprintf("container %s: ", r.spec.Name)+fmt.Sprintf(format, args...))
}
