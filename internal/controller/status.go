package controller

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
)

// Condition types on the HAProxyTemplateConfig.
const (
	CondValid    = "Valid"    // the config compiled and is the one running
	CondRendered = "Rendered" // the current cluster state rendered and validated
)

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	return s
}

// configStatusInterval is the least time between two status writes that follow
// renders. Each write reads and writes the whole HAProxyTemplateConfig (its
// templates are most of it) and comes back to both replicas as a watch event:
// written per render, at 20 route creations a second that was a third of the
// leader's CPU.
const configStatusInterval = time.Second

// configStatus writes the HAProxyTemplateConfig's status and Events about it.
type configStatus struct {
	dyn       dynamic.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	namespace string
	name      string
	// hold, if set, delays the writes that follow a render until its delivery
	// (the runtime path first).
	hold func(context.Context)
	// interval is the least time between two writes (configStatusInterval when 0).
	interval time.Duration

	mu      sync.Mutex
	running bool
	next    func() // the latest render's write, waiting for the one in flight
	last    time.Time
}

// afterDelivery runs write off the reconcile loop, after hold; writes run one at a
// time, at most one per interval, and only the latest waiting one runs (each
// replaces the whole condition).
func (cs *configStatus) afterDelivery(ctx context.Context, write func(context.Context)) {
	fn := func() {
		if cs.hold != nil {
			cs.hold(ctx)
		}
		if ctx.Err() == nil {
			write(ctx)
		}
	}
	cs.mu.Lock()
	if cs.running {
		cs.next = fn
		cs.mu.Unlock()
		return
	}
	cs.running = true
	cs.mu.Unlock()
	go func() {
		for fn != nil {
			interval := cs.interval
			if interval == 0 {
				interval = configStatusInterval
			}
			if wait := time.Until(cs.last.Add(interval)); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
				}
				cs.mu.Lock()
				if cs.next != nil { // a later render's write replaces this one
					fn, cs.next = cs.next, nil
				}
				cs.mu.Unlock()
			}
			cs.last = time.Now()
			fn()
			cs.mu.Lock()
			fn, cs.next = cs.next, nil
			cs.running = fn != nil
			cs.mu.Unlock()
		}
	}()
}

// setValid records whether a config generation was accepted.
func (cs *configStatus) setValid(ctx context.Context, u *unstructured.Unstructured, cfgErr error) {
	cond := metav1.Condition{Type: CondValid, Status: metav1.ConditionTrue, Reason: "Compiled", Message: "config compiled and running", ObservedGeneration: u.GetGeneration()}
	status, msg := "Valid", "config compiled and running"
	if cfgErr != nil {
		status, msg = "Invalid", cfgErr.Error()
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "Invalid", truncate(msg)
		cs.recorder.Event(u, corev1.EventTypeWarning, "InvalidConfig", truncate(msg))
	}
	cs.update(ctx, u.GetNamespace(), u.GetName(), func(st *v1alpha1.HAProxyTemplateConfigStatus) {
		st.ObservedGeneration = u.GetGeneration()
		st.ValidationStatus = status
		st.ValidationMessage = truncate(firstLine(msg))
		st.ValidationErrors = nil
		if cfgErr != nil {
			st.ValidationErrors = problems(cfgErr)
		}
		setCondition(&st.Conditions, cond)
	})
}

// renderFailed records a failed reconcile (a Warning Event and Rendered=False).
func (cs *configStatus) renderFailed(ctx context.Context, reason string, err error, generation int64) {
	ref := &unstructured.Unstructured{}
	ref.SetAPIVersion(v1alpha1.GroupVersion.String())
	ref.SetKind(v1alpha1.KindHAProxyTemplateConfig)
	ref.SetNamespace(cs.namespace)
	ref.SetName(cs.name)
	cs.recorder.Event(ref, corev1.EventTypeWarning, reason, truncate(err.Error()))
	cs.afterDelivery(ctx, func(ctx context.Context) {
		cs.renderFailedStatus(ctx, reason, err, generation)
	})
}

func (cs *configStatus) renderFailedStatus(ctx context.Context, reason string, err error, generation int64) {
	cs.update(ctx, cs.namespace, cs.name, func(st *v1alpha1.HAProxyTemplateConfigStatus) {
		setCondition(&st.Conditions, metav1.Condition{Type: CondRendered, Status: metav1.ConditionFalse, Reason: reason,
			Message: truncate(err.Error()), ObservedGeneration: generation})
	})
}

// iterationFailed records why the running config stopped (e.g. missing credentials).
func (cs *configStatus) iterationFailed(ctx context.Context, err error) {
	cs.update(ctx, cs.namespace, cs.name, func(st *v1alpha1.HAProxyTemplateConfigStatus) {
		setCondition(&st.Conditions, metav1.Condition{Type: CondRendered, Status: metav1.ConditionFalse, Reason: "Failed", Message: truncate(err.Error())})
	})
}

// rendered records a successful reconcile of the podSelector's fleet, after its
// delivery and off the reconcile loop.
func (cs *configStatus) rendered(ctx context.Context, hash string, generation int64, watched int) {
	cs.afterDelivery(ctx, func(ctx context.Context) { cs.renderedStatus(ctx, hash, generation, watched) })
}

func (cs *configStatus) renderedStatus(ctx context.Context, hash string, generation int64, watched int) {
	cs.update(ctx, cs.namespace, cs.name, func(st *v1alpha1.HAProxyTemplateConfigStatus) {
		setCondition(&st.Conditions, metav1.Condition{Type: CondRendered, Status: metav1.ConditionTrue, Reason: "Rendered",
			Message: "rendered bundle " + hash[:12], ObservedGeneration: generation})
		st.WatchedResourceCount = int32(watched)
	})
}

// update changes the status subresource; an unchanged status is not written.
func (cs *configStatus) update(ctx context.Context, ns, name string, mutate func(*v1alpha1.HAProxyTemplateConfigStatus)) {
	client := cs.dyn.Resource(ConfigGVR).Namespace(ns)
	for range 3 {
		u, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			cs.log.Warn("read config for status", "error", err)
			return
		}
		var st v1alpha1.HAProxyTemplateConfigStatus
		if raw, ok := u.Object["status"].(map[string]any); ok {
			_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st)
		}
		before := st.DeepCopy()
		mutate(&st)
		if equalStatus(before, &st) {
			return
		}
		now := metav1.Now()
		st.LastValidated = &now
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
		if err != nil {
			return
		}
		u.Object["status"] = raw
		if _, err = client.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err == nil {
			return
		}
		cs.log.Debug("status update conflict; retrying", "error", err)
	}
}

func equalStatus(a, b *v1alpha1.HAProxyTemplateConfigStatus) bool {
	ra, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	rb, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	return fmt.Sprint(ra) == fmt.Sprint(rb)
}

// setCondition sets a condition, keeping its transition time when the status is unchanged.
func setCondition(conds *[]metav1.Condition, c metav1.Condition) {
	for i, old := range *conds {
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		} else {
			c.LastTransitionTime = metav1.Now()
		}
		(*conds)[i] = c
		return
	}
	c.LastTransitionTime = metav1.Now()
	*conds = append(*conds, c)
}

func problems(err error) []string {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")); l != "" {
			lines = append(lines, truncate(l))
		}
	}
	return lines
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func truncate(s string) string {
	const max = 1024
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
