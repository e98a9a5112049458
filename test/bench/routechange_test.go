//go:build benchgw

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const (
	routeChangeNS   = "bench-routechange"
	routeChangeHost = "route.example.com"
	markerHeader    = "my-added-header"
	markerValue     = "added-value"
)

// LoopResult is one request loop's outcome: the Gateway address or one HAProxy pod.
type LoopResult struct {
	Target      string `json:"target"` // gateway ns/name, or ns/pod
	Requests    int64  `json:"requests"`
	Failures    int64  `json:"failures"`
	FirstFail   string `json:"first_failure,omitempty"`
	MarkerSeen  int64  `json:"marker_seen"` // 200s carrying my-added-header: added-value
	PlainSeen   int64  `json:"plain_seen"`  // 200s without it
	After404    bool   `json:"after_cleanup_404"`
	AfterMarker bool   `json:"after_cleanup_marker"` // must be false
}

// routeChange is upstream's availability test: one route flipped
// BENCH_ROUTECHANGE_ITERATIONS times, BENCH_ROUTECHANGE_GRACE apart, between port
// 80 with a backendRef-level response header and port 8080 without it, under a
// continuous request loop through every Gateway (and, for the non-vacuity gate,
// through every HAProxy pod of each Gateway's fleet). Any non-200 fails.
func (r *run) routeChange(res *ScenarioResult) error {
	if err := r.createNamespace(routeChangeNS); err != nil {
		return err
	}
	if err := r.createBackend(routeChangeNS, true); err != nil {
		return err
	}
	baseline := map[Gateway]Checksums{}
	for _, g := range r.k.Gateways {
		c, err := r.settledChecksums(g)
		if err != nil {
			return err
		}
		baseline[g] = c
	}
	if _, err := r.gw.GatewayV1().HTTPRoutes(routeChangeNS).Create(r.ctx, r.changeRoute(false), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create route: %w", err)
	}
	type target struct{ name, addr, port string }
	var targets []target
	for _, g := range r.k.Gateways {
		targets = append(targets, target{g.String(), r.addrs[g], "80"})
		pods, err := r.gatewayPods(g)
		if err != nil {
			return err
		}
		for name, ip := range pods {
			targets = append(targets, target{g.Namespace + "/" + name, ip, "80"})
		}
	}
	for _, tg := range targets {
		if err := r.eventually("the route through "+tg.name, time.Minute, 25*time.Millisecond, func() (bool, string) {
			code, _, _, err := r.get(tg.addr, tg.port, routeChangeHost, "/")
			return code == 200, fmt.Sprint(code, err)
		}); err != nil {
			return err
		}
	}
	smp := r.startSampler()
	ctx, cancel := context.WithTimeout(r.ctx, r.k.RouteChangeTimeout)
	defer cancel()
	results := make([]*LoopResult, len(targets))
	var wg sync.WaitGroup
	var failed atomic.Bool
	for i, tg := range targets {
		lr := &LoopResult{Target: tg.name}
		results[i] = lr
		wg.Add(1)
		go func() { // bounded by the window and RouteChangeMaxRequests
			defer wg.Done()
			client := r.c.HTTPClient(10 * time.Second)
			for lr.Requests < int64(r.k.RouteChangeMaxRequests) && ctx.Err() == nil {
				code, hdr, body, err := getWith(ctx, client, tg.addr, tg.port, routeChangeHost, "/")
				if ctx.Err() != nil {
					return // cut by the end of the window, not by HAProxy
				}
				lr.Requests++
				switch {
				case err == nil && code == 200 && hdr.Get(markerHeader) == markerValue:
					lr.MarkerSeen++
				case err == nil && code == 200:
					lr.PlainSeen++
				default:
					lr.Failures++
					if lr.FirstFail == "" {
						lr.FirstFail = fmt.Sprintf("request %d at %s: status %d err %v body %q", lr.Requests, time.Now().UTC().Format(time.RFC3339Nano), code, err, body)
					}
					failed.Store(true)
				}
				time.Sleep(time.Microsecond)
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // the loops run before the first change
	var harness error
	changes := 0
	for i := range r.k.RouteChangeIterations {
		if err := r.updateChangeRoute(i%2 == 0); err != nil {
			harness = fmt.Errorf("change %d: %w", i, err)
			break
		}
		changes++
		time.Sleep(r.k.RouteChangeGrace)
	}
	// The last variant has time to show through every pod before the loops stop.
	time.Sleep(2 * time.Second)
	cancel()
	wg.Wait()
	raw, resources := smp.finish()

	// Cleanup: the route goes; every target answers 404 without the marker, and
	// the published configuration returns to its baseline checksums.
	if err := r.gw.GatewayV1().HTTPRoutes(routeChangeNS).Delete(r.ctx, "route", metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete route: %w", err)
	}
	for i, tg := range targets {
		lr := results[i]
		_ = r.eventually(tg.name+" answers 404 after cleanup", time.Minute, 50*time.Millisecond, func() (bool, string) {
			code, hdr, _, err := r.get(tg.addr, tg.port, routeChangeHost, "/")
			lr.After404 = err == nil && code == 404
			lr.AfterMarker = hdr.Get(markerHeader) != ""
			return lr.After404 && !lr.AfterMarker, fmt.Sprint(code, err)
		})
	}
	checksumsBack := true
	for _, g := range r.k.Gateways {
		if err := r.eventually("HAProxyCfg checksums of "+g.String()+" back at baseline", 90*time.Second, time.Second, func() (bool, string) {
			c, err := r.gatewayChecksums(g)
			if err != nil {
				return false, err.Error()
			}
			return c.Config == baseline[g].Config && reflect.DeepEqual(c.Maps, baseline[g].Maps), checksumDiff(baseline[g], c)
		}); err != nil {
			checksumsBack = false
			res.Reasons = append(res.Reasons, err.Error())
		}
	}
	var failures, requests int64
	marker := true
	for i, lr := range results {
		failures += lr.Failures
		requests += lr.Requests
		if lr.MarkerSeen == 0 {
			marker = false
			res.Reasons = append(res.Reasons, "the marker header was never seen through "+targets[i].name)
		}
		if !lr.After404 || lr.AfterMarker {
			res.Reasons = append(res.Reasons, targets[i].name+" did not answer 404 without the marker after cleanup")
		}
		if lr.Failures > 0 {
			res.Reasons = append(res.Reasons, fmt.Sprintf("%s: %d failed requests, first: %s", targets[i].name, lr.Failures, lr.FirstFail))
		}
	}
	cleanOK := true
	for _, lr := range results {
		cleanOK = cleanOK && lr.After404 && !lr.AfterMarker
	}
	res.MeasuredPass = !failed.Load() && marker && cleanOK && checksumsBack && harness == nil
	res.Headline = map[string]any{"changes": changes, "requests": requests, "failures": failures,
		"marker_seen_everywhere": marker, "cleanup_404": cleanOK, "checksums_back_at_baseline": checksumsBack}
	for _, w := range []struct {
		name string
		v    any
	}{{"loops.json", results}, {"summary.json", res.Headline}, {"baseline-checksums.json", baseline},
		{"resources.json", resources}, {"resource-samples.json", raw}} {
		if err := WriteJSON(r.out, filepath.Join("routechange", w.name), w.v); err != nil {
			return err
		}
	}
	return harness
}

// settledFor is how long a Gateway's published HAProxyCfg must stay the same to
// be a baseline: longer than the controller's publication and deployment pacing
// (a few seconds), so that the tail of an earlier scenario's cleanup (the scale
// scenario's 5,000 routes) is not taken for the baseline.
const settledFor = 15 * time.Second

// settledChecksums waits until a Gateway's HAProxyCfg is published and every pod
// runs it, unchanged for settledFor: the baseline.
func (r *run) settledChecksums(g Gateway) (Checksums, error) {
	var last Checksums
	var since time.Time
	err := r.eventually("a settled HAProxyCfg for "+g.String(), 5*time.Minute, time.Second, func() (bool, string) {
		c, err := r.gatewayChecksums(g)
		if err != nil {
			return false, err.Error()
		}
		allRun := len(c.Pods) > 0
		for _, sum := range c.Pods {
			allRun = allRun && sum == c.Total
		}
		if !allRun || c.Total != last.Total {
			since = time.Now()
		}
		last = c
		return time.Since(since) >= settledFor, fmt.Sprintf("%+v", c)
	})
	return last, err
}

// changeRoute is upstream's route variant: with marker, port 80 and a
// backendRef-level ResponseHeaderModifier; without, port 8080 and no filter.
func (r *run) changeRoute(marker bool) *gwv1.HTTPRoute {
	port := gwv1.PortNumber(8080)
	ref := gwv1.HTTPBackendRef{}
	if marker {
		port = 80
		ref.Filters = []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterResponseHeaderModifier,
			ResponseHeaderModifier: &gwv1.HTTPHeaderFilter{Add: []gwv1.HTTPHeader{{Name: markerHeader, Value: markerValue}}}}}
	}
	ref.BackendRef = gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: "backend", Port: &port}}
	return &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "route"},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: r.parentRefs()},
			Hostnames:       []gwv1.Hostname{routeChangeHost},
			Rules:           []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{ref}}},
		},
	}
}

// updateChangeRoute replaces the route's spec with a variant (retrying conflicts).
func (r *run) updateChangeRoute(marker bool) error {
	for attempt := 0; ; attempt++ {
		cur, err := r.gw.GatewayV1().HTTPRoutes(routeChangeNS).Get(r.ctx, "route", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec = r.changeRoute(marker).Spec
		_, err = r.gw.GatewayV1().HTTPRoutes(routeChangeNS).Update(r.ctx, cur, metav1.UpdateOptions{})
		if err == nil || !apierrors.IsConflict(err) || attempt > 5 {
			return err
		}
	}
}

// checksumDiff names the files whose checksums differ from the baseline.
func checksumDiff(base, now Checksums) string {
	var diff []string
	if base.Config != now.Config {
		diff = append(diff, "haproxy.cfg")
	}
	for name, sum := range now.Maps {
		if base.Maps[name] != sum {
			diff = append(diff, name)
		}
	}
	for name := range base.Maps {
		if _, ok := now.Maps[name]; !ok {
			diff = append(diff, name+" (gone)")
		}
	}
	sort.Strings(diff)
	return "differ from the baseline: " + strings.Join(diff, ", ")
}
