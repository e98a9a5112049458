package node

import (
	"context"
	"fmt"
	"log"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Config configures the process node.
type Config struct {
	NodeName string
	Netns    string // the cluster's network namespace; pod namespaces are named after it
	HostIP   string // the node's address (the API server's advertised one)
	PodsDir  string // per-pod directories: volumes, logs
	Dirs     Dirs   // where mapped binaries live
	Self     string // this executable, re-executed as container-init
}

// Node runs the pods bound to it as processes.
type Node struct {
	cfg     Config
	client  kubernetes.Interface
	sources *apiSources
	net     *podNetwork

	ctx context.Context // set by Run; pod workers stop when it ends

	mu      sync.Mutex
	workers map[types.UID]*podWorker
}

// New creates a node; Run starts it.
func New(cfg Config, client kubernetes.Interface) *Node {
	return &Node{
		cfg:     cfg,
		client:  client,
		sources: &apiSources{client: client},
		net:     newPodNetwork(cfg.Netns, cfg.HostIP),
		workers: map[types.UID]*podWorker{},
	}
}

func (n *Node) logf(format string, args ...any) {
	log.Printf(format, args...)
}

func (n *Node) podDir(pod *corev1.Pod) string {
	return filepath.Join(n.cfg.PodsDir, pod.Namespace+"_"+pod.Name)
}

// podAddress returns the pod's IP and network namespace: the node's own for
// hostNetwork pods (netns ""), else a new pod namespace with its own /32.
func (n *Node) podAddress(pod *corev1.Pod) (ip, netns string, err error) {
	if pod.Spec.HostNetwork {
		return n.cfg.HostIP, "", nil
	}
	return n.net.allocate()
}

// Run registers the node, runs pods until ctx ends, then stops them all.
func (n *Node) Run(ctx context.Context) error {
	n.ctx = ctx
	if err := killOrphans(n.cfg.Netns); err != nil {
		return fmt.Errorf("end processes of an earlier node: %w", err)
	}
	if err := n.net.clear(); err != nil {
		return fmt.Errorf("remove stale pod networks: %w", err)
	}
	if err := n.register(ctx); err != nil {
		return err
	}
	go n.heartbeat(ctx)
	go func() {
		if err := n.serveLogs(ctx); err != nil {
			n.logf("%v", err) // kubectl logs is a convenience: the node runs on without it
		}
	}()

	factory := informers.NewSharedInformerFactoryWithOptions(n.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", n.cfg.NodeName).String()
		}))
	podInformer := factory.Core().V1().Pods().Informer()
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { n.podChanged(obj, false) },
		UpdateFunc: func(_, obj any) { n.podChanged(obj, false) },
		DeleteFunc: func(obj any) { n.podChanged(obj, true) },
	}); err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	// ConfigMaps and Secrets of every namespace, for env and volumes.
	sourceFactory := informers.NewSharedInformerFactory(n.client, 0)
	n.sources.watch(sourceFactory)
	sourceFactory.Start(ctx.Done())
	factory.Start(ctx.Done())
	n.logf("node %s running; pods dir %s", n.cfg.NodeName, n.cfg.PodsDir)
	<-ctx.Done()
	factory.Shutdown()
	sourceFactory.Shutdown()
	n.waitWorkers(30 * time.Second)
	return nil
}

func (n *Node) podChanged(obj any, deleted bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	w, exists := n.workers[pod.UID]
	if exists {
		w.setPod(pod, deleted)
		return
	}
	if deleted {
		return
	}
	w = newPodWorker(n, pod)
	n.workers[pod.UID] = w
	go func() {
		w.run(n.ctx)
		n.mu.Lock()
		delete(n.workers, pod.UID)
		n.mu.Unlock()
	}()
}

// waitWorkers waits (bounded) for every pod worker to finish its shutdown.
func (n *Node) waitWorkers(limit time.Duration) {
	n.mu.Lock()
	workers := make([]*podWorker, 0, len(n.workers))
	for _, w := range n.workers {
		workers = append(workers, w)
	}
	n.mu.Unlock()
	deadline := time.After(limit)
	for _, w := range workers {
		select {
		case <-w.done:
		case <-deadline:
			return
		}
	}
}
