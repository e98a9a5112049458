package watch

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// ServedBy returns a Watcher.Served that asks d, once per group/version. A
// group/version the API server does not know (404) serves nothing; any other
// discovery error answers onError: true for Register, so that a flaky discovery
// never empties a store (the informer retries as it always does), false for a
// poll that waits for a resource to appear.
func ServedBy(d discovery.DiscoveryInterface, onError bool) func(schema.GroupVersionResource) bool {
	known := map[schema.GroupVersion]map[string]bool{}
	return func(gvr schema.GroupVersionResource) bool {
		gv := gvr.GroupVersion()
		res, ok := known[gv]
		if !ok {
			list, err := d.ServerResourcesForGroupVersion(gv.String())
			switch {
			case apierrors.IsNotFound(err):
				res = map[string]bool{}
			case err != nil:
				return onError
			default:
				res = map[string]bool{}
				for _, r := range list.APIResources {
					res[r.Name] = true
				}
			}
			known[gv] = res
		}
		return res[gvr.Resource]
	}
}
