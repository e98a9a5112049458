package node

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Expand replaces $(NAME) with lookup(NAME) the way Kubernetes does for command,
// args and env values: "$$" is a literal "$", and a reference to an undefined
// name (or an unterminated one) stays as written.
func Expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; next {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if value, ok := lookup(name); ok {
				b.WriteString(value)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// podFacts are the values the downward API and base environment draw from.
type podFacts struct {
	pod    *corev1.Pod
	podIP  string
	hostIP string
}

// sources resolves ConfigMap and Secret keys for env and volumes.
type sources interface {
	configMap(namespace, name string) (map[string]string, error)
	secret(namespace, name string) (map[string][]byte, error)
}

// fieldRef resolves a downward-API field path.
func fieldRef(facts podFacts, path string) (string, error) {
	pod := facts.pod
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return facts.podIP, nil
	case "status.hostIP", "status.hostIPs":
		return facts.hostIP, nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if path == prefix {
			return formatMap(m), nil
		}
		if strings.HasPrefix(path, prefix+"['") && strings.HasSuffix(path, "']") {
			return m[path[len(prefix)+2:len(path)-2]], nil
		}
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, k+"="+strconv.Quote(m[k]))
	}
	return strings.Join(lines, "\n")
}

// BuildEnv returns the container's environment in order, as NAME=value entries:
// a base environment, envFrom, then env (later entries may refer to earlier
// ones with $(NAME)).
func buildEnv(facts podFacts, c *corev1.Container, src sources) ([]string, error) {
	pod := facts.pod
	values := map[string]string{}
	var order []string
	set := func(name, value string) {
		if _, seen := values[name]; !seen {
			order = append(order, name)
		}
		values[name] = value
	}
	set("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	set("HOME", "/root")
	set("HOSTNAME", pod.Name)
	// There is no kube-proxy: in-cluster clients must reach the API server directly.
	set("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	set("KUBERNETES_SERVICE_PORT", "6443")
	set("KUBERNETES_SERVICE_PORT_HTTPS", "6443")
	for _, from := range c.EnvFrom {
		data, err := envFromData(pod.Namespace, from, src)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			set(from.Prefix+k, data[k])
		}
	}
	lookup := func(name string) (string, bool) { v, ok := values[name]; return v, ok }
	for _, e := range c.Env {
		value, err := envValue(facts, c, e, src, lookup)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		set(e.Name, value)
	}
	// Markers that identify the pod's processes (tests, orphan cleanup).
	set("HAPTIC_POD", pod.Namespace+"/"+pod.Name)
	set("HAPTIC_POD_UID", string(pod.UID))
	set("HAPTIC_CONTAINER", c.Name)
	env := make([]string, 0, len(order))
	for _, name := range order {
		env = append(env, name+"="+values[name])
	}
	return env, nil
}

func envFromData(namespace string, from corev1.EnvFromSource, src sources) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		data, err := src.configMap(namespace, from.ConfigMapRef.Name)
		if err != nil && !isOptional(from.ConfigMapRef.Optional) {
			return nil, fmt.Errorf("envFrom configmap %s: %w", from.ConfigMapRef.Name, err)
		}
		return data, nil
	case from.SecretRef != nil:
		data, err := src.secret(namespace, from.SecretRef.Name)
		if err != nil && !isOptional(from.SecretRef.Optional) {
			return nil, fmt.Errorf("envFrom secret %s: %w", from.SecretRef.Name, err)
		}
		out := make(map[string]string, len(data))
		for k, v := range data {
			out[k] = string(v)
		}
		return out, nil
	}
	return nil, nil
}

func isOptional(p *bool) bool { return p != nil && *p }

func envValue(facts podFacts, c *corev1.Container, e corev1.EnvVar, src sources, lookup func(string) (string, bool)) (string, error) {
	if e.ValueFrom == nil {
		return Expand(e.Value, lookup), nil
	}
	ref := e.ValueFrom
	switch {
	case ref.FieldRef != nil:
		return fieldRef(facts, ref.FieldRef.FieldPath)
	case ref.ConfigMapKeyRef != nil:
		data, err := src.configMap(facts.pod.Namespace, ref.ConfigMapKeyRef.Name)
		if err != nil {
			if isOptional(ref.ConfigMapKeyRef.Optional) {
				return "", nil
			}
			return "", err
		}
		value, ok := data[ref.ConfigMapKeyRef.Key]
		if !ok && !isOptional(ref.ConfigMapKeyRef.Optional) {
			return "", fmt.Errorf("configmap %s has no key %s", ref.ConfigMapKeyRef.Name, ref.ConfigMapKeyRef.Key)
		}
		return value, nil
	case ref.SecretKeyRef != nil:
		data, err := src.secret(facts.pod.Namespace, ref.SecretKeyRef.Name)
		if err != nil {
			if isOptional(ref.SecretKeyRef.Optional) {
				return "", nil
			}
			return "", err
		}
		value, ok := data[ref.SecretKeyRef.Key]
		if !ok && !isOptional(ref.SecretKeyRef.Optional) {
			return "", fmt.Errorf("secret %s has no key %s", ref.SecretKeyRef.Name, ref.SecretKeyRef.Key)
		}
		return string(value), nil
	case ref.ResourceFieldRef != nil:
		return resourceField(c, ref.ResourceFieldRef), nil
	}
	return "", fmt.Errorf("unsupported valueFrom")
}

// resourceField reports a container's limit or request; without one, the node's capacity.
func resourceField(c *corev1.Container, ref *corev1.ResourceFieldSelector) string {
	kind, resourceName, _ := strings.Cut(ref.Resource, ".")
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(resourceName)]
	if !ok {
		q = nodeCapacity()[corev1.ResourceName(resourceName)]
	}
	if resourceName == "cpu" {
		return strconv.FormatInt(q.MilliValue()/1000+boolInt(q.MilliValue()%1000 != 0), 10)
	}
	return strconv.FormatInt(q.Value(), 10)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// expandArgv expands $(NAME) in command and args against the container env.
func expandArgv(argv, env []string) []string {
	values := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		values[k] = v
	}
	lookup := func(name string) (string, bool) { v, ok := values[name]; return v, ok }
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = Expand(a, lookup)
	}
	return out
}
