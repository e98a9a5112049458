package controller

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/haproxy-haptic/haptic/internal/deploy"
)

// discoverPods keeps a fleet's targets equal to the running HAProxy pods that match
// its selector in the controller's namespace.
func (it *iteration) discoverPods(ctx context.Context, f *fleet) error {
	d := it.d
	sel := labels.SelectorFromSet(f.selector).String()
	factory := informers.NewSharedInformerFactoryWithOptions(d.kube, 0, informers.WithNamespace(d.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel }))
	inf := factory.Core().V1().Pods().Informer()
	lister := factory.Core().V1().Pods().Lister()
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, DeleteFunc: poke, UpdateFunc: func(_, n any) { poke(n) },
	}); err != nil {
		return err
	}
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil
	}
	last := ""
	for {
		pods, err := lister.List(labels.Everything())
		if err != nil {
			return fmt.Errorf("list HAProxy pods: %w", err)
		}
		targets := targetsOf(pods)
		if key := fmt.Sprint(targets); key != last {
			last = key
			it.setFleetPods(ctx, f, targets)
			d.bus.Publish(podsChanged{count: len(targets)})
			d.log.Info("HAProxy pods", "gateway", f.gateway.String(), "count", len(targets), "pods", key)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}

// targetsOf returns the pods that can take a config: running, with an IP, not deleted.
func targetsOf(pods []*corev1.Pod) []deploy.Pod {
	var out []deploy.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			continue
		}
		out = append(out, deploy.Pod{Name: p.Name, IP: p.Status.PodIP})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
