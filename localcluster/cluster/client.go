package cluster

import (
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// RESTConfig returns the admin client configuration. Its connections are opened
// inside the cluster's namespace, so it works from the root namespace too.
func RESTConfig(cfg Config) (*rest.Config, error) {
	restConfig, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig())
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", cfg.Kubeconfig(), err)
	}
	restConfig.Dial = netns.Dialer{Name: cfg.Netns, Timeout: 5 * time.Second}.DialContext
	restConfig.QPS = 200
	restConfig.Burst = 400
	return restConfig, nil
}

// Clientset returns an admin clientset that dials inside the namespace.
func Clientset(cfg Config) (*kubernetes.Clientset, *rest.Config, error) {
	restConfig, err := RESTConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("create clientset: %w", err)
	}
	return cs, restConfig, nil
}
