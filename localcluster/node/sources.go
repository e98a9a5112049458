package node

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// apiSources reads ConfigMaps and Secrets for env and volumes, and requests
// service-account tokens. Reads come from informer caches once they have
// synced (volumes are re-synced every few seconds for every pod, so direct
// GETs would add up), and from the API server before that.
type apiSources struct {
	client     kubernetes.Interface
	configMaps listersv1.ConfigMapLister
	secrets    listersv1.SecretLister
	synced     []cache.InformerSynced
}

// watch starts the ConfigMap and Secret caches from the node's informer factory.
func (s *apiSources) watch(factory informers.SharedInformerFactory) {
	cms := factory.Core().V1().ConfigMaps()
	secrets := factory.Core().V1().Secrets()
	s.configMaps, s.secrets = cms.Lister(), secrets.Lister()
	s.synced = []cache.InformerSynced{cms.Informer().HasSynced, secrets.Informer().HasSynced}
}

func (s *apiSources) cached() bool {
	if len(s.synced) == 0 {
		return false
	}
	for _, synced := range s.synced {
		if !synced() {
			return false
		}
	}
	return true
}

func (s *apiSources) configMap(namespace, name string) (map[string]string, error) {
	var cm *corev1.ConfigMap
	var err error
	if s.cached() {
		cm, err = s.configMaps.ConfigMaps(namespace).Get(name)
	}
	// Not cached yet, or created a moment ago and not seen by the watch yet.
	if cm == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cm, err = s.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	}
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
	var secret *corev1.Secret
	var err error
	if s.cached() {
		secret, err = s.secrets.Secrets(namespace).Get(name)
	}
	if secret == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		secret, err = s.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	}
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
