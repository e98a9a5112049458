package node

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "alpha", "B": "beta"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	cases := map[string]string{
		"$(A)":         "alpha",
		"x-$(A)-$(B)":  "x-alpha-beta",
		"$$(A)":        "$(A)",
		"$$":           "$",
		"$(MISSING)":   "$(MISSING)",
		"$(A":          "$(A",
		"cost $5":      "cost $5",
		"trailing $":   "trailing $",
		"$(A)$(A)":     "alphaalpha",
		"no variables": "no variables",
	}
	for in, want := range cases {
		if got := Expand(in, lookup); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

type fakeSources struct {
	configMaps map[string]map[string]string
	secrets    map[string]map[string][]byte
}

func (f fakeSources) configMap(ns, name string) (map[string]string, error) {
	if d, ok := f.configMaps[ns+"/"+name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("configmap %s/%s not found", ns, name)
}

func (f fakeSources) secret(ns, name string) (map[string][]byte, error) {
	if d, ok := f.secrets[ns+"/"+name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("secret %s/%s not found", ns, name)
}

func TestBuildEnv(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "u1", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "haptic-node"},
	}
	container := &corev1.Container{
		Name:    "c",
		EnvFrom: []corev1.EnvFromSource{{Prefix: "CM_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		Env: []corev1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "APP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
			{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "pw"}}},
			{Name: "URL", Value: "http://$(POD_IP):8080/$(NAMESPACE)/$(UNDEFINED)"},
		},
	}
	src := fakeSources{
		configMaps: map[string]map[string]string{"shop/cfg": {"MODE": "fast"}},
		secrets:    map[string]map[string][]byte{"shop/creds": {"pw": []byte("s3cret")}},
	}
	env, err := buildEnv(podFacts{pod: pod, podIP: "10.244.0.7", hostIP: "10.96.0.1"}, container, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"CM_MODE=fast", "POD_NAME=web-1", "NAMESPACE=shop", "POD_IP=10.244.0.7", "NODE=haptic-node",
		"APP=web", "PASSWORD=s3cret", "URL=http://10.244.0.7:8080/shop/$(UNDEFINED)",
		"HAPTIC_POD=shop/web-1", "KUBERNETES_SERVICE_HOST=10.96.0.1",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %q: %v", want, env)
		}
	}
	argv := expandArgv([]string{"--ip=$(POD_IP)", "$$(POD_IP)"}, env)
	if !slices.Equal(argv, []string{"--ip=10.244.0.7", "$(POD_IP)"}) {
		t.Errorf("expandArgv = %v", argv)
	}

	missing := &corev1.Container{Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k"}}}}}
	if _, err := buildEnv(podFacts{pod: pod}, missing, src); err == nil {
		t.Error("missing configmap: want error")
	}
}
