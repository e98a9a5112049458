package controller

import (
	"context"
	"fmt"
	"sort"
	"time"

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
	c := it.c
	sel := labels.SelectorFromSet(f.selector).String()
	factory := informers.NewSharedInformerFactoryWithOptions(c.kube, 0, informers.WithNamespace(c.opts.Namespace),
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
			c.bus.Publish(podsChanged{count: len(targets)})
			c.log.Info("HAProxy pods", "gateway", f.gateway.String(), "count", len(targets), "pods", key)
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

// driftLoop asks each pod for the hash of the files on its disk; a pod whose tree no
// longer matches what it was given is re-applied. Each ask also runs the agent's
// runtime map verification; the maps it found diverging (and corrected) are counted.
func (it *iteration) driftLoop(ctx context.Context, dep *deploy.Deployer, every time.Duration) {
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if dep.Desired() == nil {
			continue
		}
		expected := dep.RunningHashes()
		for _, p := range dep.Pods() {
			want := expected[p.Name]
			if want == "" {
				continue // nothing accepted yet: the worker is applying
			}
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			// The agent also compares its map files with the running worker and
			// corrects them (runtime verification) before it answers.
			st, err := dep.Client(p).VerifyState(sctx)
			cancel()
			if err != nil {
				continue
			}
			observeVerify(it.c.metrics, st)
			// A runtime apply may have landed between the two reads: the pod is
			// off only if it matches neither what was expected before nor after.
			if st.TreeHash != st.Hash || (st.Hash != want && st.Hash != dep.RunningHashes()[p.Name]) {
				it.c.log.Warn("drift detected; re-applying", "pod", p.Name, "hash", st.Hash, "treeHash", st.TreeHash, "want", want)
				it.c.metrics.DeploymentRuntimeDivergence.Inc()
				dep.Forget(p.Name)
			}
		}
	}
}
