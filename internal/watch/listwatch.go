package watch

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

// newInformer is client-go's filtered dynamic (or metadata) informer of gvr in all
// namespaces, with one addition: a watch that cannot start because the API server
// refuses connections or throttles (429) is reported to onRetry. The reflector
// retries those itself, with back-off, without telling its watch error handler,
// so an API server that is away would otherwise go unnoticed.
func newInformer(dyn dynamic.Interface, meta metadata.Interface, gvr schema.GroupVersionResource, metadataOnly bool,
	tweak func(*metav1.ListOptions), onRetry func(error)) cache.SharedIndexInformer {
	var (
		list    func(context.Context, metav1.ListOptions) (runtime.Object, error)
		watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)
		example runtime.Object
		client  any
	)
	if metadataOnly {
		r := meta.Resource(gvr).Namespace(metav1.NamespaceAll)
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return r.List(ctx, o) }
		watchFn, example, client = r.Watch, &metav1.PartialObjectMetadata{}, meta
	} else {
		r := dyn.Resource(gvr).Namespace(metav1.NamespaceAll)
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return r.List(ctx, o) }
		watchFn, example, client = r.Watch, &unstructured.Unstructured{}, dyn
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			w, err := watchFn(ctx, o)
			if err != nil && onRetry != nil && (utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err)) {
				onRetry(err)
			}
			return w, err
		},
	}
	return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), example,
		// No indexers: the stores are read by key and whole (a namespace index kept a
		// set of every object's key again, and nothing asked it).
		cache.SharedIndexInformerOptions{ObjectDescription: gvr.String()})
}
