package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

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

// setConfigStatus records whether a config generation was accepted.
func (c *Controller) setConfigStatus(ctx context.Context, u *unstructured.Unstructured, cfgErr error) {
	cond := metav1.Condition{Type: CondValid, Status: metav1.ConditionTrue, Reason: "Compiled", Message: "config compiled and running", ObservedGeneration: u.GetGeneration()}
	status, msg := "Valid", "config compiled and running"
	if cfgErr != nil {
		status, msg = "Invalid", cfgErr.Error()
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "Invalid", truncate(msg)
		c.recorder.Event(u, corev1.EventTypeWarning, "InvalidConfig", truncate(msg))
	}
	c.updateStatus(ctx, u.GetNamespace(), u.GetName(), func(st *v1alpha1.HAProxyTemplateConfigStatus) {
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

func (it *iteration) reportFailure(ctx context.Context, reason string, err error) {
	c := it.c
	c.log.Error("reconcile failed; the deployed config keeps serving", "reason", reason, "error", err)
	ref := &unstructured.Unstructured{}
	ref.SetAPIVersion(v1alpha1.GroupVersion.String())
	ref.SetKind(v1alpha1.KindHAProxyTemplateConfig)
	ref.SetNamespace(c.opts.Namespace)
	ref.SetName(c.opts.ConfigName)
	c.recorder.Event(ref, corev1.EventTypeWarning, reason, truncate(err.Error()))
	c.updateStatus(ctx, c.opts.Namespace, c.opts.ConfigName, func(st *v1alpha1.HAProxyTemplateConfigStatus) {
		setCondition(&st.Conditions, metav1.Condition{Type: CondRendered, Status: metav1.ConditionFalse, Reason: reason,
			Message: truncate(err.Error()), ObservedGeneration: it.generation})
	})
}

// reportIterationError records why the running config stopped (e.g. missing credentials).
func (c *Controller) reportIterationError(ctx context.Context, err error) {
	c.updateStatus(ctx, c.opts.Namespace, c.opts.ConfigName, func(st *v1alpha1.HAProxyTemplateConfigStatus) {
		setCondition(&st.Conditions, metav1.Condition{Type: CondRendered, Status: metav1.ConditionFalse, Reason: "Failed", Message: truncate(err.Error())})
	})
}

func (it *iteration) reportSuccess(ctx context.Context, hash string) {
	c := it.c
	c.updateStatus(ctx, c.opts.Namespace, c.opts.ConfigName, func(st *v1alpha1.HAProxyTemplateConfigStatus) {
		setCondition(&st.Conditions, metav1.Condition{Type: CondRendered, Status: metav1.ConditionTrue, Reason: "Rendered",
			Message: "rendered bundle " + hash[:12], ObservedGeneration: it.generation})
		st.WatchedResourceCount = int32(len(it.cfg.Spec.WatchedResources))
	})
}

// updateStatus changes the status subresource; an unchanged status is not written.
func (c *Controller) updateStatus(ctx context.Context, ns, name string, mutate func(*v1alpha1.HAProxyTemplateConfigStatus)) {
	client := c.dyn.Resource(ConfigGVR).Namespace(ns)
	for range 3 {
		u, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			c.log.Warn("read config for status", "error", err)
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
		c.log.Debug("status update conflict; retrying", "error", err)
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

var errNoCredentials = errors.New("no agent credentials")
