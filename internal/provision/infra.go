package provision

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gatewayNameLabel marks what is generated for a Gateway (the Gateway API's label).
const gatewayNameLabel = "gateway.networking.k8s.io/gateway-name"

// infraKeysAnnotation records, on a Gateway's Deployment, which pod labels and
// annotations came from spec.infrastructure, so that removing one there removes it
// from the pods.
const infraKeysAnnotation = "haproxy-haptic.org/infrastructure-keys"

// Infra is what a Gateway asks of the resources generated for it: its
// spec.infrastructure labels and annotations, its name, and its listeners' ports.
type Infra struct {
	name                string
	labels, annotations map[string]string
	ports               []int32
}

// InfraOf reads a Gateway and the ListenerSets attached to it (their listeners'
// ports are the Gateway's too). Infrastructure labels that would change which pods
// a selector matches (ours, or the podSelector's) are not propagated.
func InfraOf(gw *gwv1.Gateway, sets []*gwv1.ListenerSet, podSelector map[string]string) Infra {
	in := Infra{name: gw.Name, labels: map[string]string{}, annotations: map[string]string{}}
	if i := gw.Spec.Infrastructure; i != nil {
		for k, v := range i.Labels {
			if _, selects := podSelector[string(k)]; !selects && !reservedLabels[string(k)] {
				in.labels[string(k)] = string(v)
			}
		}
		for k, v := range i.Annotations {
			if !reservedAnnotations[string(k)] {
				in.annotations[string(k)] = string(v)
			}
		}
	}
	for _, l := range gw.Spec.Listeners {
		if !slices.Contains(in.ports, int32(l.Port)) {
			in.ports = append(in.ports, int32(l.Port))
		}
	}
	for _, ls := range sets {
		for _, l := range ls.Spec.Listeners {
			if !slices.Contains(in.ports, int32(l.Port)) {
				in.ports = append(in.ports, int32(l.Port))
			}
		}
	}
	slices.Sort(in.ports)
	return in
}

var (
	reservedLabels      = map[string]bool{GatewayLabel: true, componentLabel: true, gatewayNameLabel: true}
	reservedAnnotations = map[string]bool{GatewayAnnotation: true, infraKeysAnnotation: true}
)

// fingerprint changes when anything generated from the Gateway must change.
func (g Infra) Fingerprint() string {
	return fmt.Sprint(g.labels, g.annotations, g.ports) // fmt prints maps sorted
}

// keys lists the infrastructure label and annotation keys, for infraKeysAnnotation.
func (g Infra) keys() string {
	var out []string
	for k := range g.labels {
		out = append(out, "label:"+k)
	}
	for k := range g.annotations {
		out = append(out, "annotation:"+k)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// applyTo sets the infrastructure metadata and the gateway-name label on meta,
// removing what an earlier version set (previous: its keys()), and reports whether
// anything changed.
func (g Infra) applyTo(meta *metav1.ObjectMeta, previous string) bool {
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	changed := false
	set := func(m map[string]string, k, v string) {
		if old, ok := m[k]; !ok || old != v {
			m[k] = v
			changed = true
		}
	}
	for _, key := range strings.Split(previous, ",") {
		kind, k, _ := strings.Cut(key, ":")
		var have, want map[string]string
		switch kind {
		case "label":
			have, want = meta.Labels, g.labels
		case "annotation":
			have, want = meta.Annotations, g.annotations
		default:
			continue
		}
		if _, keep := want[k]; !keep {
			if _, ok := have[k]; ok {
				delete(have, k)
				changed = true
			}
		}
	}
	for k, v := range g.labels {
		set(meta.Labels, k, v)
	}
	for k, v := range g.annotations {
		set(meta.Annotations, k, v)
	}
	set(meta.Labels, gatewayNameLabel, g.name)
	return changed
}

// Provisioned reports whether g was recorded by a successful Ensure: the Gateway's
// Service exists, so its endpoints can be written.
func (g Infra) Provisioned() bool { return g.name != "" }
