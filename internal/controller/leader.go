package controller

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderElection makes one of several controller replicas the one that deploys,
// writes status and publishes HAProxyCfg; the others serve metrics and wait.
type LeaderElection struct {
	// Lease is the Lease's name in the controller's namespace (default
	// "<config name>-leader").
	Lease string
	// Identity names this replica (default: the host name).
	Identity                                  string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// lead blocks until this replica leads (or ctx ends), then returns a context that
// ends when leadership is lost or ctx ends. Without LeaderElection it returns ctx at
// once. release ends the election: a leader gives the Lease up at once (so that
// another replica takes over without waiting for it to expire); callers run it
// after the leader-only runners stopped, and it returns when the Lease is released
// (bounded by the renew deadline).
func (c *Controller) lead(ctx context.Context) (lctx context.Context, release func(), err error) {
	le := c.opts.LeaderElection
	if le == nil {
		c.d.metrics.Leader.Set(1)
		return ctx, func() {}, nil
	}
	lease, id := le.Lease, le.Identity
	if lease == "" {
		lease = c.opts.ConfigName + "-leader"
	}
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, nil, fmt.Errorf("leader election identity: %w", err)
		}
		id = host
	}
	c.peer.setSelf(id)
	durations := []*time.Duration{&le.LeaseDuration, &le.RenewDeadline, &le.RetryPeriod}
	for i, d := range []time.Duration{15 * time.Second, 10 * time.Second, 2 * time.Second} {
		if *durations[i] <= 0 {
			*durations[i] = d
		}
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: c.opts.Namespace, Name: lease},
		Client:     c.d.kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	leading := make(chan struct{})
	lctx, lost := context.WithCancel(ctx)
	// The election outlives ctx until release: the Lease is given up only after
	// what the leader runs has stopped.
	ectx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		ReleaseOnCancel: true, Name: lease,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				c.d.metrics.Leader.Set(1)
				c.d.log.Info("leading", "lease", lease, "identity", id)
				close(leading)
			},
			OnStoppedLeading: func() {
				c.d.metrics.Leader.Set(0)
				lost()
			},
			OnNewLeader: func(leader string) {
				c.peer.observe(leader)
				if leader != id {
					c.d.log.Info("following", "leader", leader, "lease", lease)
				}
			},
		},
	})
	if err != nil {
		lost()
		stopElection()
		return nil, nil, fmt.Errorf("leader election: %w", err)
	}
	c.d.metrics.Leader.Set(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		elector.Run(ectx)
	}()
	release = func() {
		stopElection()
		select {
		case <-done:
			c.d.log.Info("leader election ended", "lease", lease, "identity", id)
		case <-time.After(le.RenewDeadline):
			c.d.log.Warn("leader election did not end in time; the Lease expires instead", "lease", lease)
		}
	}
	select {
	case <-leading:
	case <-lctx.Done():
	}
	return lctx, release, nil
}

// leaderLabel marks the pod of the replica that leads (the one whose stores the
// admission webhook can use): the chart's webhook Service selects it.
const leaderLabel = "haproxy-haptic.org/leader"

// labelLeader sets (leading) or removes the leader label on this replica's own pod
// (Options.PodName in Options.Namespace); without a pod name it does nothing. A
// replica that stops leading removes the label before it campaigns again.
func (c *Controller) labelLeader(ctx context.Context, leading bool) {
	if c.opts.PodName == "" {
		return
	}
	value := "null"
	if leading {
		value = `"true"`
	}
	patch := []byte(`{"metadata":{"labels":{"` + leaderLabel + `":` + value + `}}}`)
	if _, err := c.d.kube.CoreV1().Pods(c.opts.Namespace).Patch(ctx, c.opts.PodName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		c.d.log.Warn("label this pod as leader", "pod", c.opts.PodName, "leading", leading, "error", err)
	}
}
