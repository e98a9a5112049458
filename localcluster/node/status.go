package node

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// containerView is what a container runner reports about one container.
type containerView struct {
	Name         string
	Image        string
	Waiting      *corev1.ContainerStateWaiting
	Running      *corev1.ContainerStateRunning
	Terminated   *corev1.ContainerStateTerminated
	LastState    corev1.ContainerState
	Ready        bool
	Started      bool
	RestartCount int32
	PID          int
	Sidecar      bool // a restartable init container: counts for readiness
}

// podView is the node's view of a pod, the input to ComputeStatus.
type podView struct {
	PodIP       string
	HostIP      string
	StartTime   metav1.Time
	Initialized bool
	Init        []containerView
	Containers  []containerView
}

// ComputeStatus derives a pod's status from the node's view. It is pure: the
// previous status only supplies condition transition times that did not change,
// and now stamps conditions that did.
func ComputeStatus(pod *corev1.Pod, view podView, now metav1.Time) corev1.PodStatus {
	status := corev1.PodStatus{
		HostIP:    view.HostIP,
		StartTime: &view.StartTime,
		QOSClass:  pod.Status.QOSClass,
	}
	if view.HostIP != "" {
		status.HostIPs = []corev1.HostIP{{IP: view.HostIP}}
	}
	if view.PodIP != "" {
		status.PodIP = view.PodIP
		status.PodIPs = []corev1.PodIP{{IP: view.PodIP}}
	}
	allReady := len(view.Containers) > 0
	for _, c := range view.Init {
		status.InitContainerStatuses = append(status.InitContainerStatuses, c.status())
		if c.Sidecar {
			allReady = allReady && c.Ready
		}
	}
	for _, c := range view.Containers {
		status.ContainerStatuses = append(status.ContainerStatuses, c.status())
		allReady = allReady && c.Ready
	}
	status.Phase = podPhase(pod.Spec.RestartPolicy, view)
	ready := allReady && status.Phase == corev1.PodRunning
	previous := pod.Status.Conditions
	status.Conditions = []corev1.PodCondition{
		condition(previous, corev1.PodReadyToStartContainers, view.PodIP != "" || pod.Spec.HostNetwork, now),
		condition(previous, corev1.PodInitialized, view.Initialized, now),
		condition(previous, corev1.ContainersReady, ready, now),
		condition(previous, corev1.PodReady, ready, now),
		condition(previous, corev1.PodScheduled, true, now),
	}
	return status
}

// podPhase follows the kubelet's rules closely enough for kubectl and controllers.
func podPhase(policy corev1.RestartPolicy, view podView) corev1.PodPhase {
	if !view.Initialized {
		for _, c := range view.Init {
			if c.Terminated != nil && c.Terminated.ExitCode != 0 && policy == corev1.RestartPolicyNever {
				return corev1.PodFailed
			}
		}
		return corev1.PodPending
	}
	running, waiting, succeeded, failed := 0, 0, 0, 0
	for _, c := range view.Containers {
		switch {
		case c.Running != nil:
			running++
		case c.Terminated != nil && c.Terminated.ExitCode == 0:
			succeeded++
		case c.Terminated != nil:
			failed++
		case c.Waiting != nil && c.LastState.Terminated != nil:
			running++ // restarting after a previous run
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case failed > 0 && policy != corev1.RestartPolicyAlways:
		if policy == corev1.RestartPolicyOnFailure {
			return corev1.PodRunning // failed containers will be restarted
		}
		return corev1.PodFailed
	case succeeded > 0 && policy != corev1.RestartPolicyAlways:
		return corev1.PodSucceeded
	}
	return corev1.PodRunning
}

func condition(previous []corev1.PodCondition, kind corev1.PodConditionType, ok bool, now metav1.Time) corev1.PodCondition {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	c := corev1.PodCondition{Type: kind, Status: status, LastTransitionTime: now}
	for _, p := range previous {
		if p.Type == kind && p.Status == status {
			c.LastTransitionTime = p.LastTransitionTime
			c.LastProbeTime = p.LastProbeTime
		}
	}
	if !ok && (kind == corev1.PodReady || kind == corev1.ContainersReady) {
		c.Reason = "ContainersNotReady"
	}
	return c
}

func (c containerView) status() corev1.ContainerStatus {
	s := corev1.ContainerStatus{
		Name:                 c.Name,
		Image:                c.Image,
		ImageID:              "haptic-local://" + ImageName(c.Image),
		Ready:                c.Ready,
		Started:              &c.Started,
		RestartCount:         c.RestartCount,
		LastTerminationState: c.LastState,
	}
	if c.PID > 0 {
		s.ContainerID = "haptic-process://" + strconv.Itoa(c.PID)
	}
	switch {
	case c.Running != nil:
		s.State.Running = c.Running
	case c.Terminated != nil:
		s.State.Terminated = c.Terminated
	case c.Waiting != nil:
		s.State.Waiting = c.Waiting
	default:
		s.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	return s
}
