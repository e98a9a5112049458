package controller

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
)

type credentials struct{ username, password string }

var errNoCredentials = errors.New("no agent credentials")

// readCredentials reads the agent credentials Secret (keys username and password);
// a ref without a namespace is in the controller's. Values are never logged.
func readCredentials(ctx context.Context, kube kubernetes.Interface, namespace string, ref *v1alpha1.SecretReference) (credentials, error) {
	if ref == nil {
		return credentials{}, fmt.Errorf("spec.credentialsSecretRef: %w: name the Secret holding the agent's username and password", errNoCredentials)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = namespace
	}
	s, err := kube.CoreV1().Secrets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return credentials{}, fmt.Errorf("agent credentials Secret %s/%s: %w", ns, ref.Name, err)
	}
	u, p := string(s.Data["username"]), string(s.Data["password"])
	if u == "" || p == "" {
		return credentials{}, fmt.Errorf("agent credentials Secret %s/%s: keys username and password are required", ns, ref.Name)
	}
	return credentials{username: u, password: p}, nil
}
