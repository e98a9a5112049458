package watch

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// onDemand fetches whole objects of an on-demand store from the API server when a
// template reads them, keeping a small LRU cache keyed by namespace/name and
// resourceVersion. Only metadata stays resident for listing; large Secrets are the
// intended use.
type onDemand struct {
	client dynamic.NamespaceableResourceInterface
	admit  func(raw map[string]any) (snapshot.Object, error)
	max    int
	mu     sync.Mutex
	order  *list.List
	items  map[string]*list.Element
}

// waitTimeout bounds an API read of an on-demand store.
const waitTimeout = 10 * time.Second

type cached struct {
	key string
	obj snapshot.Object
}

func newOnDemand(client dynamic.NamespaceableResourceInterface, max int, admit func(map[string]any) (snapshot.Object, error)) *onDemand {
	return &onDemand{client: client, admit: admit, max: max, order: list.New(), items: map[string]*list.Element{}}
}

// Fetch takes (namespace, name) or (name) for cluster-scoped resources.
func (o *onDemand) Fetch(keys ...string) ([]snapshot.Object, error) {
	var ns, name string
	switch len(keys) {
	case 1:
		name = keys[0]
	case 2:
		ns, name = keys[0], keys[1]
	default:
		return nil, fmt.Errorf("on-demand stores are fetched by (namespace, name), got %d keys", len(keys))
	}
	key := ns + "/" + name
	o.mu.Lock()
	if el, ok := o.items[key]; ok {
		o.order.MoveToFront(el)
		obj := el.Value.(*cached).obj
		o.mu.Unlock()
		return []snapshot.Object{obj}, nil
	}
	o.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	u, err := o.client.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	obj, err := o.admit(u.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.items[key] = o.order.PushFront(&cached{key: key, obj: obj})
	for o.order.Len() > o.max {
		last := o.order.Back()
		o.order.Remove(last)
		delete(o.items, last.Value.(*cached).key)
	}
	return []snapshot.Object{obj}, nil
}

// Forget drops a cached object after it changed.
func (o *onDemand) Forget(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if el, ok := o.items[key]; ok {
		o.order.Remove(el)
		delete(o.items, key)
	}
}

func partialToRaw(p *metav1.PartialObjectMetadata) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(p)
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
