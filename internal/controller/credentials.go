package controller

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type credentials struct{ username, password string }

// credentials reads the agent credentials Secret (keys username and password). Values
// are never logged.
func (it *iteration) credentials(ctx context.Context) (credentials, error) {
	ref := it.cfg.Spec.CredentialsSecretRef
	if ref == nil {
		return credentials{}, fmt.Errorf("spec.credentialsSecretRef: %w: name the Secret holding the agent's username and password", errNoCredentials)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = it.c.opts.Namespace
	}
	s, err := it.c.kube.CoreV1().Secrets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return credentials{}, fmt.Errorf("agent credentials Secret %s/%s: %w", ns, ref.Name, err)
	}
	u, p := string(s.Data["username"]), string(s.Data["password"])
	if u == "" || p == "" {
		return credentials{}, fmt.Errorf("agent credentials Secret %s/%s: keys username and password are required", ns, ref.Name)
	}
	return credentials{username: u, password: p}, nil
}
