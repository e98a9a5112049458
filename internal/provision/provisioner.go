package provision

import (
	"context"
	"log/slog"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Provisioner makes the resources of Gateways with pods of their own.
type Provisioner struct {
	Kube kubernetes.Interface
	// Namespace is the controller's: the Gateways' Deployments live there.
	Namespace string
	// PodSelector selects the shared fleet's pods: never a Gateway's.
	PodSelector map[string]string
	// Template is the Deployment copied for each Gateway (default "haproxy").
	Template string
	Log      *slog.Logger
}

func (p *Provisioner) log() *slog.Logger {
	if p.Log == nil {
		return slog.Default()
	}
	return p.Log
}

// Result is what Ensure made of a Gateway.
type Result struct {
	// Selector selects the Gateway's pods.
	Selector map[string]string
	// Infra is what the Gateway's resources now carry; zero when its Service is not
	// (yet) right, so that the next sync does it again.
	Infra Infra
	// ServiceErr says why the Service is not right. The Service is for people: its
	// failure (e.g. a Service of that name that is not the Gateway's) never holds
	// the data plane back — retried, not waited for.
	ServiceErr error
}

// Ensure provisions a Gateway: its Deployment (an error: no pods, retry) and its
// Service (Result.ServiceErr).
func (p *Provisioner) Ensure(ctx context.Context, gw *gwv1.Gateway, infra Infra) (Result, error) {
	nn := types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}
	sel, err := p.EnsureDeployment(ctx, nn, infra)
	if err != nil {
		return Result{}, err
	}
	res := Result{Selector: sel, Infra: infra}
	if err := p.EnsureService(ctx, gw, infra); err != nil {
		res.Infra, res.ServiceErr = Infra{}, err
	}
	return res, nil
}
