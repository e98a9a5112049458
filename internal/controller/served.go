package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/haproxy-haptic/haptic/internal/watch"
)

// servedPoll is how often an iteration asks discovery whether a watched resource it
// skipped (not served: older CRDs) is served now.
var servedPoll = 30 * time.Second

// errResourcesServed ends an iteration whose skipped resources are served now: the
// controller starts the config again at once, and the new iteration watches them.
var errResourcesServed = errors.New("skipped watched resources are served now")

// watchServed returns errResourcesServed once discovery serves one of unserved (a
// CRD was installed or upgraded), nil when ctx ends.
func (it *iteration) watchServed(ctx context.Context, unserved map[string]schema.GroupVersionResource) error {
	if len(unserved) == 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(servedPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		served := watch.ServedBy(it.d.kube.Discovery(), false)
		var now []string
		for name, gvr := range unserved {
			if served(gvr) {
				now = append(now, name)
			}
		}
		if len(now) > 0 {
			sort.Strings(now)
			return fmt.Errorf("%w: %s", errResourcesServed, strings.Join(now, ","))
		}
	}
}
