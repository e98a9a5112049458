package node

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podWorker owns one pod on the node: its IP, volumes, containers and status.
type podWorker struct {
	node *Node
	uid  types.UID
	dir  string

	mu   sync.Mutex
	pod  *corev1.Pod // latest object from the informer
	gone bool        // the object was removed from the API

	wake chan struct{}
	done chan struct{}

	// Owned by the run goroutine.
	podIP       string
	podNetns    string // "" for hostNetwork pods
	startTime   metav1.Time
	volumes     volumeSet
	setupErr    error
	initRunners []*containerRunner
	runners     []*containerRunner
	initialized bool
	lastStatus  *corev1.PodStatus
	refreshed   time.Time
}

// volumeRefreshEvery is how often ConfigMap/Secret volume contents are re-synced.
const volumeRefreshEvery = 5 * time.Second

func newPodWorker(n *Node, pod *corev1.Pod) *podWorker {
	return &podWorker{
		node: n,
		uid:  pod.UID,
		pod:  pod,
		dir:  n.podDir(pod),
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
}

func (w *podWorker) key() string {
	p := w.latest()
	return p.Namespace + "/" + p.Name
}

func (w *podWorker) latest() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod
}

// setPod records a newer object (or, with gone, that the object is gone).
func (w *podWorker) setPod(pod *corev1.Pod, gone bool) {
	w.mu.Lock()
	if pod != nil {
		w.pod = pod
	}
	w.gone = w.gone || gone
	w.mu.Unlock()
	w.poke()
}

// poke wakes the worker loop; it never blocks.
func (w *podWorker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *podWorker) restartPolicy() corev1.RestartPolicy {
	if p := w.latest().Spec.RestartPolicy; p != "" {
		return p
	}
	return corev1.RestartPolicyAlways
}

func (w *podWorker) facts() podFacts {
	return podFacts{pod: w.latest(), podIP: w.podIP, hostIP: w.node.cfg.HostIP}
}

func (w *podWorker) probeIP() string { return w.podIP }

func (w *podWorker) terminationGrace() time.Duration {
	if g := w.latest().Spec.TerminationGracePeriodSeconds; g != nil {
		return time.Duration(*g) * time.Second
	}
	return 30 * time.Second
}

// run drives the pod until it is deleted, then cleans up and finalizes deletion.
func (w *podWorker) run(ctx context.Context) {
	defer close(w.done)
	ticker := time.NewTicker(2 * time.Second)
	defer ticker.Stop()
	terminal := isTerminal(w.latest())
	for {
		w.mu.Lock()
		pod, gone := w.pod, w.gone
		w.mu.Unlock()
		if gone || pod.DeletionTimestamp != nil || ctx.Err() != nil {
			w.shutdown(ctx, pod, gone)
			return
		}
		if !terminal {
			w.step(ctx, pod)
			w.pushStatus(ctx)
			w.refreshVolumes(ctx)
		}
		select {
		case <-w.wake:
		case <-ticker.C:
		case <-ctx.Done():
		}
	}
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// step advances setup → init containers → containers as far as possible.
func (w *podWorker) step(ctx context.Context, pod *corev1.Pod) {
	if w.startTime.IsZero() {
		w.startTime = metav1.Now()
	}
	if w.podIP == "" {
		ip, netns, err := w.node.podAddress(pod)
		if err != nil {
			w.setupErr = err
			return
		}
		w.podIP, w.podNetns = ip, netns
	}
	if w.volumes == nil {
		if err := os.MkdirAll(w.dir, 0o755); err != nil {
			w.setupErr = fmt.Errorf("create pod dir: %w", err)
			return
		}
		vols, err := prepareVolumes(ctx, w.facts(), w.dir, w.node.sources, w.node.sources)
		if err != nil {
			w.setupErr = err
			return
		}
		w.volumes, w.setupErr, w.refreshed = vols, nil, time.Now()
	}
	for i := range pod.Spec.InitContainers {
		if i == len(w.initRunners) {
			r := newContainerRunner(w, pod.Spec.InitContainers[i], true)
			w.initRunners = append(w.initRunners, r)
			r.start(ctx)
		}
		r := w.initRunners[i]
		v := r.snapshot()
		if v.Sidecar {
			if !v.Started {
				return // the next one starts once this sidecar has started
			}
			continue
		}
		if !r.finished() || v.Terminated == nil || v.Terminated.ExitCode != 0 {
			return
		}
	}
	w.initialized = true
	if w.runners == nil {
		for _, c := range pod.Spec.Containers {
			r := newContainerRunner(w, c, false)
			w.runners = append(w.runners, r)
			r.start(ctx)
		}
	}
}

func (w *podWorker) refreshVolumes(ctx context.Context) {
	if w.volumes == nil || time.Since(w.refreshed) < volumeRefreshEvery {
		return
	}
	w.refreshed = time.Now()
	if err := refreshVolumes(ctx, w.facts(), w.volumes, w.node.sources); err != nil {
		w.node.logf("pod %s: %v", w.key(), err)
	}
}

// view gathers the runners' state for ComputeStatus.
func (w *podWorker) view() podView {
	v := podView{PodIP: w.podIP, HostIP: w.node.cfg.HostIP, StartTime: w.startTime, Initialized: w.initialized}
	pod := w.latest()
	waiting := func(c corev1.Container) containerView {
		reason, msg := "PodInitializing", ""
		if w.setupErr != nil {
			reason, msg = "CreateContainerConfigError", w.setupErr.Error()
		}
		return containerView{Name: c.Name, Image: c.Image, Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	}
	for i, c := range pod.Spec.InitContainers {
		if i < len(w.initRunners) {
			v.Init = append(v.Init, w.initRunners[i].snapshot())
		} else {
			v.Init = append(v.Init, waiting(c))
		}
	}
	for i, c := range pod.Spec.Containers {
		if i < len(w.runners) {
			v.Containers = append(v.Containers, w.runners[i].snapshot())
		} else {
			v.Containers = append(v.Containers, waiting(c))
		}
	}
	return v
}

// pushStatus writes the computed status when it differs from the last one sent.
func (w *podWorker) pushStatus(ctx context.Context) {
	pod := w.latest()
	status := ComputeStatus(pod, w.view(), metav1.Now())
	if w.lastStatus != nil && apiequality.Semantic.DeepEqual(*w.lastStatus, status) {
		return
	}
	pods := w.node.client.CoreV1().Pods(pod.Namespace)
	for attempt := 0; attempt < 3; attempt++ {
		updated := pod.DeepCopy()
		updated.Status = status
		_, err := pods.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		if err == nil {
			w.lastStatus = &status
			return
		}
		if apierrors.IsNotFound(err) {
			w.setPod(nil, true)
			return
		}
		if !apierrors.IsConflict(err) {
			w.node.logf("update status of %s: %v", w.key(), err)
			return
		}
		fresh, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || fresh.UID != w.uid {
			return
		}
		pod = fresh
		status = ComputeStatus(pod, w.view(), metav1.Now())
	}
}

// shutdown stops the containers (SIGTERM, grace, SIGKILL), releases the IP and
// files, and deletes the pod object once its processes have exited.
func (w *podWorker) shutdown(ctx context.Context, pod *corev1.Pod, gone bool) {
	grace := w.terminationGrace()
	if pod.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	if gone || ctx.Err() != nil {
		grace = min(grace, 2*time.Second) // node shutdown or a forced delete
	}
	all := append(append([]*containerRunner(nil), w.initRunners...), w.runners...)
	var wg sync.WaitGroup
	for _, r := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !r.stop(grace, grace+15*time.Second) {
				w.node.logf("container %s of %s did not stop", r.spec.Name, w.key())
			}
		}()
	}
	wg.Wait()
	killPodLeftovers(string(w.uid))
	if w.podNetns != "" {
		if err := w.node.net.release(w.podIP); err != nil {
			w.node.logf("release %s of %s: %v", w.podIP, w.key(), err)
		}
	}
	if err := os.RemoveAll(w.dir); err != nil {
		w.node.logf("remove %s: %v", w.dir, err)
	}
	if gone || ctx.Err() != nil {
		return
	}
	zero := int64(0)
	uid := w.uid
	err := w.node.client.CoreV1().Pods(pod.Namespace).Delete(context.WithoutCancel(ctx), pod.Name,
		metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		w.node.logf("finalize deletion of %s: %v", w.key(), err)
	}
}
