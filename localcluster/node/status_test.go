package node

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func conditionStatus(s corev1.PodStatus, kind corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range s.Conditions {
		if c.Type == kind {
			return c.Status
		}
	}
	return ""
}

func TestComputeStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	running := &corev1.ContainerStateRunning{StartedAt: now}
	exited := func(code int32) *corev1.ContainerStateTerminated {
		return &corev1.ContainerStateTerminated{ExitCode: code}
	}
	tests := []struct {
		name      string
		policy    corev1.RestartPolicy
		view      podView
		wantPhase corev1.PodPhase
		wantReady corev1.ConditionStatus
	}{
		{name: "running and ready", view: podView{Initialized: true, PodIP: "10.244.0.2",
			Containers: []containerView{{Name: "a", Running: running, Ready: true, Started: true}}},
			wantPhase: corev1.PodRunning, wantReady: corev1.ConditionTrue},
		{name: "running, not ready", view: podView{Initialized: true,
			Containers: []containerView{{Name: "a", Running: running, Ready: true}, {Name: "b", Running: running}}},
			wantPhase: corev1.PodRunning, wantReady: corev1.ConditionFalse},
		{name: "image not mapped", view: podView{Initialized: true,
			Containers: []containerView{{Name: "a", Waiting: &corev1.ContainerStateWaiting{Reason: "ImageNotMapped"}}}},
			wantPhase: corev1.PodPending, wantReady: corev1.ConditionFalse},
		{name: "crash loop", view: podView{Initialized: true, Containers: []containerView{{Name: "a",
			Waiting:   &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"},
			LastState: corev1.ContainerState{Terminated: exited(1)}, RestartCount: 3}}},
			wantPhase: corev1.PodRunning, wantReady: corev1.ConditionFalse},
		{name: "completed, never restart", policy: corev1.RestartPolicyNever, view: podView{Initialized: true,
			Containers: []containerView{{Name: "a", Terminated: exited(0)}}},
			wantPhase: corev1.PodSucceeded, wantReady: corev1.ConditionFalse},
		{name: "failed, never restart", policy: corev1.RestartPolicyNever, view: podView{Initialized: true,
			Containers: []containerView{{Name: "a", Terminated: exited(2)}}},
			wantPhase: corev1.PodFailed, wantReady: corev1.ConditionFalse},
		{name: "sidecar not ready", view: podView{Initialized: true,
			Init:       []containerView{{Name: "s", Sidecar: true, Running: running, Started: true}},
			Containers: []containerView{{Name: "a", Running: running, Ready: true, Started: true}}},
			wantPhase: corev1.PodRunning, wantReady: corev1.ConditionFalse},
		{name: "sidecar ready", view: podView{Initialized: true,
			Init:       []containerView{{Name: "s", Sidecar: true, Running: running, Started: true, Ready: true}},
			Containers: []containerView{{Name: "a", Running: running, Ready: true, Started: true}}},
			wantPhase: corev1.PodRunning, wantReady: corev1.ConditionTrue},
		{name: "init running", view: podView{Init: []containerView{{Name: "i", Running: running}},
			Containers: []containerView{{Name: "a", Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}},
			wantPhase: corev1.PodPending, wantReady: corev1.ConditionFalse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: tc.policy}}
			if pod.Spec.RestartPolicy == "" {
				pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
			}
			s := ComputeStatus(pod, tc.view, now)
			if s.Phase != tc.wantPhase {
				t.Errorf("phase = %s, want %s", s.Phase, tc.wantPhase)
			}
			if got := conditionStatus(s, corev1.PodReady); got != tc.wantReady {
				t.Errorf("Ready = %s, want %s", got, tc.wantReady)
			}
			if got := conditionStatus(s, corev1.ContainersReady); got != tc.wantReady {
				t.Errorf("ContainersReady = %s, want %s", got, tc.wantReady)
			}
			if conditionStatus(s, corev1.PodScheduled) != corev1.ConditionTrue {
				t.Error("PodScheduled not True")
			}
			if len(s.ContainerStatuses) != len(tc.view.Containers) {
				t.Errorf("%d container statuses, want %d", len(s.ContainerStatuses), len(tc.view.Containers))
			}
		})
	}
}

func TestComputeStatusKeepsTransitionTimes(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	pod := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways}, Status: corev1.PodStatus{
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: earlier}},
	}}
	view := podView{Initialized: true, PodIP: "10.244.0.3", Containers: []containerView{{Name: "a",
		Running: &corev1.ContainerStateRunning{StartedAt: earlier}, Ready: true, Started: true, RestartCount: 2}}}
	s := ComputeStatus(pod, view, now)
	for _, c := range s.Conditions {
		if c.Type == corev1.PodReady && !c.LastTransitionTime.Equal(&earlier) {
			t.Errorf("Ready transition time changed to %v", c.LastTransitionTime)
		}
		if c.Type == corev1.PodInitialized && !c.LastTransitionTime.Equal(&now) {
			t.Errorf("new Initialized condition not stamped now: %v", c.LastTransitionTime)
		}
	}
	if s.PodIP != "10.244.0.3" || len(s.PodIPs) != 1 || s.ContainerStatuses[0].RestartCount != 2 {
		t.Errorf("unexpected status %+v", s)
	}
}
