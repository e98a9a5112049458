package node

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// apiSources reads ConfigMaps and Secrets and requests tokens from the API
// server directly: pods start rarely enough that a cache is not worth it.
type apiSources struct {
	client kubernetes.Interface
}

func (s *apiSources) configMap(namespace, name string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cm, err := s.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get configmap %s/%s: %w", namespace, name, err)
	}
	data := make(map[string]string, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = v
	}
	for k, v := range cm.BinaryData {
		data[k] = string(v)
	}
	return data, nil
}

func (s *apiSources) secret(namespace, name string) (map[string][]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	secret, err := s.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get secret %s/%s: %w", namespace, name, err)
	}
	data := make(map[string][]byte, len(secret.Data)+len(secret.StringData))
	for k, v := range secret.Data {
		data[k] = v
	}
	for k, v := range secret.StringData {
		data[k] = []byte(v)
	}
	return data, nil
}

func (s *apiSources) token(ctx context.Context, pod *corev1.Pod, sa string, spec authenticationv1.TokenRequestSpec) (string, error) {
	spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	req := &authenticationv1.TokenRequest{Spec: spec}
	resp, err := s.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request token for %s/%s: %w", pod.Namespace, sa, err)
	}
	return resp.Status.Token, nil
}
