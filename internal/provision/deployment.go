package provision

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Labels and annotations of per-Gateway HAProxy Deployments and their pods.
const (
	GatewayLabel      = "haproxy-haptic.org/gateway"  // a hash of namespace/name (label values are short)
	GatewayAnnotation = "haproxy-haptic.org/gateway"  // namespace/name
	componentLabel    = "app.kubernetes.io/component" // "gateway" on per-Gateway pods
)

// GatewayID is a label-safe, stable identity of a Gateway.
func GatewayID(gw types.NamespacedName) string {
	sum := sha256.Sum256([]byte(gw.Namespace + "/" + gw.Name))
	return hex.EncodeToString(sum[:])[:12]
}

// EnsureDeployment makes sure a Gateway has its HAProxy Deployment — a copy
// of spec.gateways.deploymentName's, relabelled so that the podSelector does not
// match its pods, its pods carrying the Gateway's spec.infrastructure labels and
// annotations and the gateway-name label — and returns the selector of those pods.
// A change of the infrastructure metadata updates the pod template (a rollout).
func (p *Provisioner) EnsureDeployment(ctx context.Context, gw types.NamespacedName, infra Infra) (map[string]string, error) {
	id := GatewayID(gw)
	sel := map[string]string{GatewayLabel: id}
	deployments := p.Kube.AppsV1().Deployments(p.Namespace)
	name := "haproxy-gw-" + id
	cur, err := deployments.Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		if infra.applyTo(&cur.Spec.Template.ObjectMeta, cur.Annotations[infraKeysAnnotation]) {
			metav1.SetMetaDataAnnotation(&cur.ObjectMeta, infraKeysAnnotation, infra.keys())
			if _, err := deployments.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
				return nil, fmt.Errorf("update deployment %s for gateway %s: %w", name, gw, err)
			}
			p.log().Info("gateway pods' infrastructure metadata changed", "gateway", gw, "deployment", name)
		}
		return sel, nil
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get deployment %s: %w", name, err)
	}
	src := p.Template
	if src == "" {
		src = "haproxy"
	}
	tmpl, err := deployments.Get(ctx, src, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("spec.gateways.deploymentName: deployment %s/%s: %w", p.Namespace, src, err)
	}
	relabel := func(in map[string]string) map[string]string {
		out := maps.Clone(in)
		if out == nil {
			out = map[string]string{}
		}
		for k := range p.PodSelector {
			delete(out, k)
		}
		out[componentLabel] = "gateway"
		out[GatewayLabel] = id
		return out
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: p.Namespace, Labels: relabel(tmpl.Labels),
			Annotations: map[string]string{GatewayAnnotation: gw.Namespace + "/" + gw.Name, infraKeysAnnotation: infra.keys()},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: sel}
	d.Spec.Template.Labels = relabel(tmpl.Spec.Template.Labels)
	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	d.Spec.Template.Annotations[GatewayAnnotation] = gw.Namespace + "/" + gw.Name
	infra.applyTo(&d.Spec.Template.ObjectMeta, "")
	if _, err := deployments.Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create deployment %s for gateway %s: %w", name, gw, err)
	}
	p.log().Info("provisioned gateway pods", "gateway", gw, "deployment", name)
	return sel, nil
}

// DeleteStale removes the Deployments of Gateways not in gws.
func (p *Provisioner) DeleteStale(ctx context.Context, gws map[types.NamespacedName]int64) error {
	deployments := p.Kube.AppsV1().Deployments(p.Namespace)
	list, err := deployments.List(ctx, metav1.ListOptions{LabelSelector: GatewayLabel})
	if err != nil {
		return fmt.Errorf("list gateway deployments: %w", err)
	}
	want := map[string]bool{}
	for gw := range gws {
		want[GatewayID(gw)] = true
	}
	for _, d := range list.Items {
		if want[d.Labels[GatewayLabel]] {
			continue
		}
		if err := deployments.Delete(ctx, d.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete deployment %s: %w", d.Name, err)
		}
		p.log().Info("removed pods of a deleted gateway", "deployment", d.Name, "gateway", d.Annotations[GatewayAnnotation])
	}
	return nil
}
