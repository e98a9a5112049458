package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Restart back-off: shorter than the kubelet's 10s..5m so tests stay fast.
const (
	initialBackoff = time.Second
	maxBackoff     = 60 * time.Second
	backoffReset   = 60 * time.Second // a run this long resets the back-off
)

// containerRunner runs one container: start, probe, restart, stop.
type containerRunner struct {
	pod     *podWorker
	spec    corev1.Container
	isInit  bool // runs to completion before the containers start
	policy  corev1.RestartPolicy
	changed func() // tells the pod worker the view changed

	mu    sync.Mutex
	view  containerView
	argv  []string      // the command last started, for events
	grace time.Duration // used when the run context is cancelled

	cancel context.CancelFunc
	done   chan struct{}
}

func newContainerRunner(w *podWorker, spec corev1.Container, isInit bool) *containerRunner {
	policy := w.restartPolicy()
	// A sidecar (an init container with restartPolicy Always) starts in init
	// order but then runs, restarts and is probed like a regular container.
	sidecar := isInit && isSidecar(spec)
	if sidecar {
		isInit, policy = false, corev1.RestartPolicyAlways
	}
	return &containerRunner{
		pod:     w,
		spec:    spec,
		isInit:  isInit,
		policy:  policy,
		changed: w.poke,
		view:    containerView{Name: spec.Name, Image: spec.Image, Sidecar: sidecar},
		done:    make(chan struct{}),
		grace:   30 * time.Second,
	}
}

func (r *containerRunner) snapshot() containerView {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.view
}

func (r *containerRunner) update(fn func(v *containerView)) {
	r.mu.Lock()
	fn(&r.view)
	r.mu.Unlock()
	r.changed()
}

// start launches the run loop.
func (r *containerRunner) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	r.cancel = cancel
	go r.run(ctx)
}

// stop asks the container to end within grace and waits up to limit for it.
func (r *containerRunner) stop(grace, limit time.Duration) bool {
	r.mu.Lock()
	r.grace = grace
	r.mu.Unlock()
	if r.cancel != nil {
		r.cancel()
	} else {
		return true
	}
	select {
	case <-r.done:
		return true
	case <-time.After(limit):
		return false
	}
}

// finished reports whether the run loop ended (a completed init container, or
// a container that will not be restarted).
func (r *containerRunner) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

type exitInfo struct {
	code   int32
	signal string
	at     time.Time
}

func (r *containerRunner) run(ctx context.Context) {
	defer func() {
		close(r.done)
		r.changed() // a finished init container lets the pod move on
	}()
	backoff := initialBackoff
	for ctx.Err() == nil {
		cmd, env, err := r.launch(ctx)
		if err != nil {
			r.setWaiting(err)
			if !sleepCtx(ctx, 2*time.Second) {
				return
			}
			continue
		}
		started := time.Now()
		pid := cmd.Process.Pid
		r.event(corev1.EventTypeNormal, "Started", "started process %d: %v", pid, r.argv)
		r.update(func(v *containerView) {
			v.Waiting, v.Terminated, v.Ready, v.Started, v.PID = nil, nil, false, false, pid
			v.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}
		})
		exit, reason := r.supervise(ctx, cmd, env)
		// The container's other processes end with its main process, as its
		// cgroup does under a kubelet; the pod's other containers run on.
		killContainerLeftovers(string(r.pod.uid), r.spec.Name)
		r.update(func(v *containerView) {
			v.Running, v.Ready, v.PID = nil, false, 0
			v.Terminated = &corev1.ContainerStateTerminated{
				ExitCode: exit.code, Reason: reason, Signal: 0,
				StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(exit.at),
				Message: exit.signal,
			}
		})
		if ctx.Err() != nil || !r.shouldRestart(exit.code) {
			return
		}
		if time.Since(started) > backoffReset {
			backoff = initialBackoff
		}
		r.update(func(v *containerView) {
			v.LastState = corev1.ContainerState{Terminated: v.Terminated}
			v.Terminated = nil
			v.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off %s restarting failed container %s", backoff, r.spec.Name)}
		})
		r.event(corev1.EventTypeWarning, "BackOff", "exited with code %d; restarting in %s", exit.code, backoff)
		if !sleepCtx(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, maxBackoff)
		r.update(func(v *containerView) { v.RestartCount++ })
	}
}

func (r *containerRunner) shouldRestart(code int32) bool {
	if r.isInit {
		return code != 0 && r.policy != corev1.RestartPolicyNever
	}
	switch r.policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return code != 0
	}
	return true
}

func (r *containerRunner) setWaiting(err error) {
	reason, message := "CreateContainerConfigError", err.Error()
	var w *waitingError
	if errors.As(err, &w) {
		reason, message = w.Reason, w.Message
	}
	changed := false
	r.update(func(v *containerView) {
		changed = v.Waiting == nil || v.Waiting.Reason != reason
		v.Running = nil
		v.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: message}
	})
	if changed {
		r.event(corev1.EventTypeWarning, "Failed", "%s: %s", reason, message)
	}
}

// launch resolves the command and starts the container process: our own
// binary re-executed as container-init in a new mount namespace and its own
// process group (so termination reaches its children too).
func (r *containerRunner) launch(ctx context.Context) (*exec.Cmd, []string, error) {
	w := r.pod
	facts := w.facts()
	env, err := buildEnv(facts, &r.spec, w.node.sources)
	if err != nil {
		return nil, nil, err
	}
	env = append(env, clusterMarker+"="+w.node.cfg.Netns)
	argv, imageEnv, err := ResolveImage(w.node.cfg.Dirs, r.spec.Image, expandArgv(r.spec.Command, env), expandArgv(r.spec.Args, env), env)
	if err != nil {
		return nil, nil, err
	}
	env = append(env, imageEnv...)
	mounts, err := containerMounts(&r.spec, w.volumes)
	if err != nil {
		return nil, nil, err
	}
	r.argv = argv
	spec := InitSpec{Argv: argv, Env: env, WorkDir: r.spec.WorkingDir, Mounts: mounts,
		ScratchDir: filepath.Join(w.dir, "scratch", r.spec.Name)}
	specFile := filepath.Join(w.dir, r.spec.Name+".init.json")
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("encode init spec: %w", err)
	}
	if err := os.WriteFile(specFile, data, 0o600); err != nil {
		return nil, nil, fmt.Errorf("write init spec: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(w.dir, r.spec.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open container log: %w", err)
	}
	defer logFile.Close()
	argvInit := []string{w.node.cfg.Self, "container-init", specFile}
	if w.podNetns != "" {
		// `ip netns exec` execs in place: the PID stays the container's.
		argvInit = append([]string{"ip", "netns", "exec", w.podNetns}, argvInit...)
	}
	cmd := exec.Command(argvInit[0], argvInit[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Unshareflags: syscall.CLONE_NEWNS}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start container %s: %w", r.spec.Name, err)
	}
	return cmd, env, nil
}

// supervise waits for the process to exit, runs its probes, and ends it when
// the run context is cancelled or liveness fails.
func (r *containerRunner) supervise(ctx context.Context, cmd *exec.Cmd, env []string) (exitInfo, string) {
	exited := make(chan exitInfo, 1)
	go func() {
		err := cmd.Wait()
		exited <- exitStatus(err)
	}()
	probeCtx, cancelProbes := context.WithCancel(ctx)
	defer cancelProbes()
	unhealthy := make(chan struct{}, 1)
	target := probeTarget{ip: r.pod.probeIP(), pid: cmd.Process.Pid, env: env, container: &r.spec}
	go r.probeLoop(probeCtx, target, unhealthy)
	select {
	case exit := <-exited:
		return exit, exitReason(exit)
	case <-ctx.Done():
		r.mu.Lock()
		grace := r.grace
		r.mu.Unlock()
		r.event(corev1.EventTypeNormal, "Killing", "stopping with a grace period of %s", grace)
		exit := terminate(cmd.Process.Pid, grace, exited)
		return exit, exitReason(exit)
	case <-unhealthy:
		r.event(corev1.EventTypeWarning, "Unhealthy", "liveness or startup probe failed; restarting")
		return terminate(cmd.Process.Pid, r.pod.terminationGrace(), exited), "Error"
	}
}

func exitReason(e exitInfo) string {
	if e.code == 0 {
		return "Completed"
	}
	return "Error"
}

func exitStatus(err error) exitInfo {
	info := exitInfo{at: time.Now()}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			info.code = 128 + int32(ws.Signal())
			info.signal = "killed by " + ws.Signal().String()
			return info
		}
		info.code = int32(exitErr.ExitCode())
	} else if err != nil {
		info.code = 1
	}
	return info
}

// terminate sends SIGTERM to the process group, waits up to grace, then SIGKILLs.
func terminate(pid int, grace time.Duration, exited <-chan exitInfo) exitInfo {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case e := <-exited:
		_ = syscall.Kill(-pid, syscall.SIGKILL) // leftover children of the group
		return e
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case e := <-exited:
		return e
	case <-time.After(10 * time.Second):
		return exitInfo{code: 137, signal: "did not exit after SIGKILL", at: time.Now()}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// isSidecar reports whether an init container is a restartable sidecar.
func isSidecar(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
