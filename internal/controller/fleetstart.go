package controller

import (
	"context"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/provision"
	"github.com/haproxy-haptic/haptic/internal/publish"
)

// startFleet wires a fleet: its deployer (whose outcomes feed metrics, Gateway
// status and the publisher), its HAProxyCfg publisher, its drift watch and — for a
// Gateway's fleet — its pod discovery. They stop with ctx or the fleet's cancel.
func (it *iteration) startFleet(ctx context.Context, gw types.NamespacedName, selector map[string]string, infra provision.Infra, extra map[string]any) *fleet {
	d := it.d
	ctx, cancel := context.WithCancel(ctx)
	extra = maps.Clone(extra)
	extra["gatewayControllerName"] = it.cfg.Spec.Gateways.GatewayControllerName()
	f := &fleet{gateway: gw, selector: selector, extra: extra, infra: infra, cancel: cancel}
	durations := it.cfg.Spec.Dataplane.ParsedDurations()
	f.dep = deploy.New(ctx, deploy.Options{
		Port: int(it.cfg.Spec.Dataplane.Port), Username: it.creds.username, Password: it.creds.password,
		SyncTimeout: durations.Sync, MinInterval: durations.MinDeployment, ReloadVerificationTimeout: durations.ReloadVerification,
		Log: d.log, HTTP: d.agentHTTP,
		OnOutcome: func(o deploy.Outcome) {
			d.deliveries.outcome(f, o, time.Now())
			observeDeploy(d.log, d.metrics, o)
			if o.Err == nil {
				it.statusDeployed(f, o)
			}
			f.pub.OnOutcome(o)
		},
	})
	f.pub = startPublisher(ctx, d, it.cfg, f)
	it.fleets.add(f)
	go f.dep.WatchDrift(ctx, durations.DriftPrevention, func(c deploy.DriftCheck) {
		observeDivergence(d.metrics, c.Verify)
		if c.Drifted {
			d.log.Warn("drift detected; re-applying", "pod", c.Pod, "hash", c.Hash, "treeHash", c.TreeHash, "want", c.Want)
			d.metrics.DeploymentRuntimeDivergence.Inc()
		}
	})
	if !f.isDefault() {
		go func() {
			if err := it.discoverPods(ctx, f); err != nil {
				d.log.Warn("gateway pod discovery stopped", "gateway", gw, "error", err)
			}
		}()
	}
	return f
}

// setFleetPods records a fleet's pods: the podSelector's are the data plane's
// addresses; a Gateway's are that Gateway's.
func (it *iteration) setFleetPods(ctx context.Context, f *fleet, targets []deploy.Pod) {
	f.dep.SetPods(targets)
	it.d.deliveries.podsChanged(f, targets)
	if !f.isDefault() {
		it.fleets.setGatewayPods(ctx, f, targets)
		return
	}
	it.d.metrics.HAProxyPods.Set(float64(len(targets)))
	if it.d.status != nil {
		ips := make([]string, 0, len(targets))
		for _, p := range targets {
			ips = append(ips, p.IP)
		}
		it.d.status.SetAddresses(ips)
	}
}

// startPublisher publishes what a fleet's rendering is, and what its pods run, as
// an HAProxyCfg: the config's name for the podSelector's fleet, <config>-gw-<id>
// for a Gateway's. At most once per configPublishInterval, off the delivery path
// (its inputs never block). It stops with ctx.
func startPublisher(ctx context.Context, d deps, cfg *v1alpha1.HAProxyTemplateConfig, f *fleet) *publish.Publisher {
	threshold := 0
	if t := cfg.Spec.Controller.ConfigPublishing.CompressionThreshold; t != nil {
		threshold = int(*t)
	}
	opts := publish.Options{
		Client: d.dyn, Namespace: d.namespace, Config: d.configName, Log: d.log,
		Interval: cfg.Spec.Dataplane.ParsedDurations().ConfigPublish, Threshold: threshold,
		Hold: d.deliveries.wait, // the runtime path first
		Pods: func() []string {
			var names []string
			for _, p := range f.dep.Pods() {
				names = append(names, p.Name)
			}
			return names
		},
	}
	if !f.isDefault() {
		id := provision.GatewayID(f.gateway)
		opts.Name = d.configName + "-gw-" + id
		opts.Labels = map[string]string{provision.GatewayLabel: id}
		opts.Annotations = map[string]string{provision.GatewayAnnotation: f.gateway.String()}
	}
	p := publish.New(opts)
	go p.Run(ctx)
	return p
}
