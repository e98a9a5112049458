package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// GVR is the HAProxyCfg resource.
var GVR = v1alpha1.GroupVersion.WithResource("haproxycfgs")

var configGVR = v1alpha1.GroupVersion.WithResource("haproxytemplateconfigs")

// writeSpec makes the object's spec the bundle's, creating the object if needed,
// and returns the object as the server has it.
func (p *Publisher) writeSpec(ctx context.Context, b *bundle.Bundle) (*unstructured.Unstructured, error) {
	client := p.opts.Client.Resource(GVR).Namespace(p.opts.Namespace)
	cur, err := client.Get(ctx, p.opts.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cur = nil
	} else if err != nil {
		return nil, fmt.Errorf("read HAProxyCfg %s/%s: %w", p.opts.Namespace, p.opts.Name, err)
	}
	if cur != nil && p.upToDate(cur, b) {
		return cur, nil
	}
	owner, err := p.owner(ctx)
	if err != nil {
		return nil, err
	}
	spec := BuildSpec(b, p.opts.Config, p.opts.Threshold)
	rawSpec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		return nil, fmt.Errorf("HAProxyCfg spec: %w", err)
	}
	var out *unstructured.Unstructured
	if cur == nil {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": rawSpec}}
		u.SetAPIVersion(v1alpha1.GroupVersion.String())
		u.SetKind(v1alpha1.KindHAProxyCfg)
		u.SetNamespace(p.opts.Namespace)
		u.SetName(p.opts.Name)
		labels := maps.Clone(p.opts.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels["app.kubernetes.io/managed-by"] = "haptic"
		u.SetLabels(labels)
		if len(p.opts.Annotations) > 0 {
			u.SetAnnotations(p.opts.Annotations)
		}
		u.SetOwnerReferences([]metav1.OwnerReference{owner})
		out, err = client.Create(ctx, u, metav1.CreateOptions{})
	} else {
		u := cur.DeepCopy()
		u.Object["spec"] = rawSpec
		u.SetOwnerReferences(withOwner(u.GetOwnerReferences(), owner))
		out, err = client.Update(ctx, u, metav1.UpdateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("write HAProxyCfg %s/%s: %w", p.opts.Namespace, p.opts.Name, err)
	}
	size := 0
	if data, err := json.Marshal(out.Object); err == nil {
		size = len(data)
	}
	p.opts.Log.Info("published HAProxyCfg", "name", p.opts.Name, "hash", short(b.Hash), "bytes", size,
		"compressed", spec.Config.Encoding == v1alpha1.EncodingGzipBase64)
	return out, nil
}

// upToDate reports whether the object already publishes b for this config.
func (p *Publisher) upToDate(u *unstructured.Unstructured, b *bundle.Bundle) bool {
	sum, _, _ := unstructured.NestedString(u.Object, "spec", "checksum")
	src, _, _ := unstructured.NestedString(u.Object, "spec", "source")
	if sum != b.Hash || src != p.opts.Config {
		return false
	}
	for _, r := range u.GetOwnerReferences() {
		if r.Kind == v1alpha1.KindHAProxyTemplateConfig && r.Name == p.opts.Config {
			return true
		}
	}
	return false
}

// owner is the reference to the HAProxyTemplateConfig: deleting the config deletes
// its HAProxyCfg.
func (p *Publisher) owner(ctx context.Context) (metav1.OwnerReference, error) {
	cfg, err := p.opts.Client.Resource(configGVR).Namespace(p.opts.Namespace).Get(ctx, p.opts.Config, metav1.GetOptions{})
	if err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("read HAProxyTemplateConfig %s/%s: %w", p.opts.Namespace, p.opts.Config, err)
	}
	yes := true
	return metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindHAProxyTemplateConfig,
		Name: cfg.GetName(), UID: cfg.GetUID(), Controller: &yes}, nil
}

// withOwner replaces any reference to the config with ref, keeping other owners.
func withOwner(refs []metav1.OwnerReference, ref metav1.OwnerReference) []metav1.OwnerReference {
	out := []metav1.OwnerReference{ref}
	for _, r := range refs {
		if r.Kind != ref.Kind || r.APIVersion != ref.APIVersion {
			out = append(out, r)
		}
	}
	return out
}

// Delete removes the HAProxyCfg (a fleet that is gone: its Gateway was deleted).
func (p *Publisher) Delete(ctx context.Context) error {
	err := p.opts.Client.Resource(GVR).Namespace(p.opts.Namespace).Delete(ctx, p.opts.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete HAProxyCfg %s/%s: %w", p.opts.Namespace, p.opts.Name, err)
	}
	return nil
}

// writeStatus writes the status subresource when it differs from the server's.
func (p *Publisher) writeStatus(ctx context.Context, obj *unstructured.Unstructured, local map[string]v1alpha1.HAProxyCfgPodStatus, current []string) error {
	var have v1alpha1.HAProxyCfgStatus
	if raw, ok := obj.Object["status"]; ok {
		if err := remarshal(raw, &have); err != nil {
			return fmt.Errorf("read HAProxyCfg status: %w", err)
		}
	}
	want := v1alpha1.HAProxyCfgStatus{ObservedGeneration: obj.GetGeneration(), Pods: MergePods(have.Pods, local, current)}
	if EqualStatus(have, want) {
		return nil
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&want)
	if err != nil {
		return fmt.Errorf("HAProxyCfg status: %w", err)
	}
	u := obj.DeepCopy()
	u.Object["status"] = raw
	if _, err := p.opts.Client.Resource(GVR).Namespace(p.opts.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("write HAProxyCfg %s/%s status: %w", p.opts.Namespace, p.opts.Name, err)
	}
	return nil
}

// EqualStatus compares two statuses as the API server stores them.
func EqualStatus(a, b v1alpha1.HAProxyCfgStatus) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

func remarshal(in any, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
