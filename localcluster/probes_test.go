package localcluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// Paths inside the pod whose parents do not exist on the host: the node must
// create them in the pod's mount namespace only.
const (
	stateDir  = "/etc/haptic-e2e/state"
	configDir = "/etc/haptic-e2e/config"
)

// TestProbeRemovesPodFromEndpoints: a ConfigMap and an emptyDir appear at
// their mount paths; a failing readiness probe makes the pod NotReady and
// takes it out of the Service's ready endpoints.
func TestProbeRemovesPodFromEndpoints(t *testing.T) {
	t.Parallel() // own namespace; process counts are per namespace
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "greeting"}, Data: map[string]string{"text": "hello from a configmap"}}
	if _, err := ns.Client.CoreV1().ConfigMaps(ns.Name).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "flappy", Labels: map[string]string{"app": "flappy"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(2)),
			Volumes: []corev1.Volume{
				{Name: "state", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "greeting"}}}},
			},
			Containers: []corev1.Container{{
				Name:    "main",
				Image:   "busybox:1.36",
				Command: []string{"sh", "-c", "cat " + configDir + "/text; touch " + stateDir + "/ready; exec sleep 600"},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "state", MountPath: stateDir},
					{Name: "config", MountPath: configDir, ReadOnly: true},
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", stateDir + "/ready"}}},
					PeriodSeconds:    1,
					FailureThreshold: 1,
				},
			}},
		},
	}
	created := time.Now()
	if _, err := ns.Client.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "flappy"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "flappy"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := ns.Client.CoreV1().Services(ns.Name).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service: %v", err)
	}
	pods := waitReadyPods(t, ns, "app=flappy", 1, 30*time.Second)
	t.Logf("new pod Ready %.2fs after creation", time.Since(created).Seconds())
	ip := pods[0].Status.PodIP
	waitFor(t, 30*time.Second, "EndpointSlice listing the pod as ready", func() (bool, string, error) {
		got := readyEndpoints(t, ns, "flappy")
		return slices.Equal(got, []string{ip}), fmt.Sprint(got), nil
	})
	if _, err := os.Stat("/etc/haptic-e2e"); !os.IsNotExist(err) {
		t.Errorf("mount path leaked onto the host filesystem: /etc/haptic-e2e (%v)", err)
	}
	logPath := filepath.Join(c.Config.PodsDir(), ns.Name+"_flappy", "main.log")
	if data, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(data), "hello from a configmap") {
		t.Errorf("log %s lacks the ConfigMap content: %q, %v", logPath, data, err)
	}

	pids, err := node.PodProcesses(ns.Name + "/flappy")
	if err != nil || len(pids) != 1 {
		t.Fatalf("container process of flappy: %v %v", pids, err)
	}
	// A ConfigMap update reaches the mounted volume, as the kubelet syncs it.
	cm.Data["text"] = "updated"
	if _, err := ns.Client.CoreV1().ConfigMaps(ns.Name).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update configmap: %v", err)
	}
	waitFor(t, 20*time.Second, "updated ConfigMap content in the pod", func() (bool, string, error) {
		out, err := exec.Command("nsenter", "--target", strconv.Itoa(pids[0]), "--mount", "--", "cat", configDir+"/text").CombinedOutput()
		return err == nil && string(out) == "updated", string(out), nil
	})

	// Make the probe fail: remove the file inside the pod's mount namespace.
	out, err := exec.Command("nsenter", "--target", strconv.Itoa(pids[0]), "--mount", "--", "rm", stateDir+"/ready").CombinedOutput()
	if err != nil {
		t.Fatalf("remove ready file in the pod: %v: %s", err, out)
	}
	waitFor(t, 20*time.Second, "pod NotReady and out of the ready endpoints", func() (bool, string, error) {
		p, err := ns.Client.CoreV1().Pods(ns.Name).Get(ctx, "flappy", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		got := readyEndpoints(t, ns, "flappy")
		return !podReady(p) && len(got) == 0, fmt.Sprintf("ready=%v endpoints=%v", podReady(p), got), nil
	})
}

// TestCrashingContainerRestarts: a container that exits is restarted with
// back-off, its restart count and last termination state shown; an image
// without a local mapping waits with reason ImageNotMapped.
func TestCrashingContainerRestarts(t *testing.T) {
	t.Parallel() // own namespace; process counts are per namespace
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	crasher := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "crasher"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "main", Image: "busybox", Command: []string{"sh", "-c", "echo boom; exit 3"},
		}}},
	}
	unmapped := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "unmapped"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "docker.io/library/nginx:1.27"}}},
	}
	for _, p := range []*corev1.Pod{crasher, unmapped} {
		if _, err := ns.Client.CoreV1().Pods(ns.Name).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", p.Name, err)
		}
	}
	waitFor(t, 30*time.Second, "crasher restarted twice", func() (bool, string, error) {
		p, err := ns.Client.CoreV1().Pods(ns.Name).Get(ctx, "crasher", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) != 1 {
			return false, fmt.Sprint(err), nil
		}
		s := p.Status.ContainerStatuses[0]
		last := s.LastTerminationState.Terminated
		return s.RestartCount >= 2 && last != nil && last.ExitCode == 3,
			fmt.Sprintf("restarts=%d last=%+v state=%+v", s.RestartCount, last, s.State), nil
	})
	out, err := c.Kubectl(ctx, "get", "pod", "crasher", "-n", ns.Name, "--no-headers")
	if err != nil {
		t.Fatalf("kubectl get pod: %v: %s", err, out)
	}
	t.Logf("kubectl: %s", strings.TrimSpace(string(out)))
	// kubectl logs goes through the API server to the node's log endpoint.
	logs, err := c.Kubectl(ctx, "logs", "crasher", "-n", ns.Name)
	if err != nil || !strings.Contains(string(logs), "boom") {
		t.Errorf("kubectl logs crasher: %v: %q", err, logs)
	}
	waitFor(t, 20*time.Second, "unmapped image waiting with ImageNotMapped", func() (bool, string, error) {
		p, err := ns.Client.CoreV1().Pods(ns.Name).Get(ctx, "unmapped", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) != 1 {
			return false, fmt.Sprint(err), nil
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "ImageNotMapped", fmt.Sprintf("%+v", p.Status.ContainerStatuses[0].State), nil
	})
}

// TestGracefulTermination: deleting a pod sends SIGTERM, waits the grace
// period for a process that ignores it, then SIGKILLs; the pod object is
// finalized only after the process is gone.
func TestGracefulTermination(t *testing.T) {
	t.Parallel() // own namespace; process counts are per namespace
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Ready only once the shell ignores SIGTERM: a signal before the trap would end it.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stubborn", Labels: map[string]string{"app": "stubborn"}},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "state", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{{
				Name: "main", Image: "busybox",
				Command:      []string{"sh", "-c", `trap "" TERM; touch ` + stateDir + `/trapped; exec sleep 600`},
				VolumeMounts: []corev1.VolumeMount{{Name: "state", MountPath: stateDir}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", stateDir + "/trapped"}}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
	if _, err := ns.Client.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	waitReadyPods(t, ns, "app=stubborn", 1, 30*time.Second)
	waitProcessCount(t, ns.Name+"/stubborn", 1, 5*time.Second)
	const grace = 2
	deleted := time.Now()
	if err := ns.Client.CoreV1().Pods(ns.Name).Delete(ctx, "stubborn", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(grace))}); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	waitFor(t, 20*time.Second, "pod object finalized", func() (bool, string, error) {
		left := listPods(t, ns, "app=stubborn")
		return len(left) == 0, fmt.Sprintf("%d pods", len(left)), nil
	})
	took := time.Since(deleted)
	if n := processCount(t, ns.Name+"/stubborn"); n != 0 {
		t.Errorf("%d processes left after the pod was finalized", n)
	}
	if took < grace*time.Second {
		t.Errorf("pod gone after %s, before its %ds grace period: SIGTERM was not ignored?", took, grace)
	}
	t.Logf("SIGTERM-ignoring pod removed after %.2fs (grace %ds)", took.Seconds(), grace)
}

// TestLivenessProbeRestartsContainer: a failing liveness probe restarts the
// container, and the restart shows in its status.
func TestLivenessProbeRestartsContainer(t *testing.T) {
	t.Parallel() // own namespace; process counts are per namespace
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "lively", Labels: map[string]string{"app": "lively"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Volumes:                       []corev1.Volume{{Name: "state", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{{
				Name:         "main",
				Image:        "busybox",
				Command:      []string{"sh", "-c", "touch " + stateDir + "/alive; exec sleep 600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "state", MountPath: stateDir}},
				LivenessProbe: &corev1.Probe{
					ProbeHandler:        corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", stateDir + "/alive"}}},
					InitialDelaySeconds: 1, // the command creates the file first
					PeriodSeconds:       1,
					FailureThreshold:    1,
				},
			}},
		},
	}
	if _, err := ns.Client.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	waitReadyPods(t, ns, "app=lively", 1, 30*time.Second)
	// A liveness probe's exec (or the shell's touch) can be counted for a moment
	// beside the container's process: wait for the container's one process.
	var pids []int
	waitFor(t, 10*time.Second, "lively's one container process", func() (bool, string, error) {
		var err error
		pids, err = node.PodProcesses(ns.Name + "/lively")
		return err == nil && len(pids) == 1, fmt.Sprint(pids, err), nil
	})
	// The emptyDir outlives the container: remove the file the restart recreates.
	out, err := exec.Command("nsenter", "--target", strconv.Itoa(pids[0]), "--mount", "--", "rm", stateDir+"/alive").CombinedOutput()
	if err != nil {
		t.Fatalf("remove alive file in the pod: %v: %s", err, out)
	}
	waitFor(t, 30*time.Second, "container restarted after failing liveness", func() (bool, string, error) {
		p, err := ns.Client.CoreV1().Pods(ns.Name).Get(ctx, "lively", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) != 1 {
			return false, fmt.Sprint(err), nil
		}
		s := p.Status.ContainerStatuses[0]
		return s.RestartCount >= 1 && s.State.Running != nil && podReady(p),
			fmt.Sprintf("restarts=%d state=%+v", s.RestartCount, s.State), nil
	})
	// The old container's process is gone: one process is left (a probe's exec or
	// the new shell's touch can be counted beside it for a moment, as above).
	waitFor(t, 10*time.Second, "one process after the restart", func() (bool, string, error) {
		n := processCount(t, ns.Name+"/lively")
		return n == 1, fmt.Sprintf("%d processes", n), nil
	})
}

// TestInitContainerAndDownwardAPI: an init container runs to completion
// before the main container, sharing an emptyDir; a sidecar (an init container
// with restartPolicy Always) keeps running beside it; a downwardAPI volume
// shows the pod's labels.
func TestInitContainerAndDownwardAPI(t *testing.T) {
	t.Parallel() // own namespace
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "staged", Labels: map[string]string{"app": "staged", "tier": "gold"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Volumes: []corev1.Volume{
				{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
					Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}},
				}}},
			},
			InitContainers: []corev1.Container{
				{
					Name: "prepare", Image: "busybox", Command: []string{"sh", "-c", "echo prepared > " + stateDir + "/stage"},
					VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: stateDir}},
				},
				{
					Name: "sidecar", Image: "busybox", Command: []string{"sleep", "600"},
					RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways),
				},
			},
			Containers: []corev1.Container{{
				Name: "main", Image: "busybox",
				Command: []string{"sh", "-c", "cat " + stateDir + "/stage /etc/haptic-e2e/info/labels; exec sleep 600"},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "work", MountPath: stateDir},
					{Name: "info", MountPath: "/etc/haptic-e2e/info"},
				},
			}},
		},
	}
	if _, err := ns.Client.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	pods := waitReadyPods(t, ns, "app=staged", 1, 30*time.Second)
	init := pods[0].Status.InitContainerStatuses
	if len(init) != 2 || init[0].State.Terminated == nil || init[0].State.Terminated.ExitCode != 0 ||
		init[1].State.Running == nil || !init[1].Ready {
		t.Errorf("init container statuses: %+v", init)
	}
	waitProcessCount(t, ns.Name+"/staged", 2, 5*time.Second) // sidecar and main
	logPath := filepath.Join(c.Config.PodsDir(), ns.Name+"_staged", "main.log")
	waitFor(t, 10*time.Second, "main container output", func() (bool, string, error) {
		data, _ := os.ReadFile(logPath)
		text := string(data)
		return strings.Contains(text, "prepared") && strings.Contains(text, `tier="gold"`), text, nil
	})
}
