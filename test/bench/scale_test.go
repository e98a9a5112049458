//go:build benchgw

package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

// zeroCounters are the controller counters whose delta over the scale window must
// be zero: series (with a label fragment) → why it matters.
var zeroCounters = []struct{ name, match string }{
	{"haptic_reconciliation_total", `result="render_error"`},
	{"haptic_reconciliation_total", `result="validation_error"`},
	{"haptic_reconciliation_total", `result="deploy_error"`},
	{"haptic_deploy_apply_total", `result="error"`},
	{"haptic_validation_errors_total", ""},
	{"haptic_fast_path_failures_total", ""},
	{"haptic_deployment_runtime_divergence_total", ""},
	{"haptic_runtime_map_divergence_total", ""},
	{"haptic_events_dropped_total", ""},
	{"haptic_events_dropped_critical_total", ""},
	{"haptic_haproxy_reloads_total", ""},
}

// activityCounters must advance during the window: the churn reached HAPTIC.
var activityCounters = []struct{ name, match string }{
	{"haptic_reconciliation_total", `result="success"`},
	{"haptic_deploy_apply_total", `result="success"`},
}

func scaleNS(i int) string { return fmt.Sprintf("bench-scale-%d", i) }

func scaleHost(ns, app string) string { return app + "." + ns + ".example.com" }

// scaleAddr is app (i, j)'s simulated endpoint address: inside 10.250.0.0/16,
// which no pod uses (nothing sends traffic to it).
func scaleAddr(i, j, gen int) string {
	n := i*1000 + j + gen*7919
	return fmt.Sprintf("10.250.%d.%d", (n/250)%250, n%250+1)
}

// scale is upstream's route-scale workload at BENCH_SCALE_NAMESPACES ×
// BENCH_SCALE_ROUTES_PER_NAMESPACE applications (see methodology for the
// backends), a readiness proof, then a jittered churn window with resource
// sampling and counter deltas.
func (r *run) scale(res *ScenarioResult) error {
	nsN, appN := r.k.ScaleNamespaces, r.k.ScaleRoutesPerNS
	total := nsN * appN
	start := time.Now()
	for i := range nsN {
		if err := r.createNamespace(scaleNS(i)); err != nil {
			return err
		}
	}
	cleaned := false
	defer func() { // a failed scenario leaves no workload behind for the next one
		if !cleaned {
			if err := r.deleteScale(nsN); err != nil {
				r.harnessErr("scale cleanup: %v", err)
			}
		}
	}()
	smp := r.startSampler()
	var retries retryCount
	if err := clustertest.Parallel(total, func(k int) error { return r.createApp(k/appN, k%appN, &retries) }); err != nil {
		smp.finish()
		return fmt.Errorf("create the workload: %w", err)
	}
	created := time.Since(start)
	r.logf("scale: %d applications created in %s (%d writes retried)", total, created.Round(time.Millisecond), retries.n.Load())
	if n := retries.n.Load(); n > 0 {
		res.Reasons = append(res.Reasons, fmt.Sprintf("%d workload writes failed at first and were retried (first: %s)", n, retries.first()))
	}
	proof, err := r.scaleReady(nsN, appN, start.Add(r.k.ScaleStartupTimeout))
	ready := time.Since(start)
	if err != nil {
		_, resources := smp.finish()
		res.MeasuredPass = false
		res.Reasons = append(res.Reasons, "readiness proof not reached: "+err.Error())
		res.Headline = map[string]any{"applications": total, "create_s": created.Seconds(), "ready": false}
		_ = WriteJSON(r.out, "scale/readiness.json", proof)
		_ = WriteJSON(r.out, "scale/startup-resources.json", resources)
		cleaned = true
		return r.deleteScale(nsN) // a negative measurement, not a broken run
	}
	r.logf("scale: readiness proof after %s", ready.Round(time.Millisecond))
	_, startupRes := smp.finish()

	before, err := r.metrics()
	if err != nil {
		return err
	}
	smp = r.startSampler()
	ctx, cancel := context.WithTimeout(r.ctx, r.k.ScaleDuration)
	churn := r.churn(ctx, nsN, appN)
	<-ctx.Done()
	cancel()
	c := <-churn
	time.Sleep(2 * sampleInterval) // the last changes' deploys land inside the sampled window
	raw, resources := smp.finish()
	after, err := r.metrics()
	if err != nil {
		return err
	}
	deltas := map[string]float64{}
	for _, zc := range zeroCounters {
		key := zc.name + zc.match
		deltas[key] = sumMetric(after, zc.name, zc.match) - sumMetric(before, zc.name, zc.match)
		if deltas[key] != 0 {
			res.Reasons = append(res.Reasons, fmt.Sprintf("%s rose by %v during the window", key, deltas[key]))
		}
	}
	activity := map[string]float64{}
	for _, ac := range activityCounters {
		activity[ac.name+ac.match] = sumMetric(after, ac.name, ac.match) - sumMetric(before, ac.name, ac.match)
	}
	if activity[`haptic_reconciliation_total`+`result="success"`] == 0 {
		return fmt.Errorf("no reconciliation during the churn window: the churn did not reach HAPTIC")
	}
	res.MeasuredPass = len(res.Reasons) == 0 && c.errors == 0
	if c.errors > 0 {
		res.Reasons = append(res.Reasons, fmt.Sprintf("%d churn writes failed (first: %s)", c.errors, c.firstErr))
	}
	var ctrl, lb []ResourceSummary
	for _, s := range resources {
		if s.Role == "controller" {
			ctrl = append(ctrl, s)
		} else {
			lb = append(lb, s)
		}
	}
	res.Headline = map[string]any{"applications": total, "create_s": round1(created.Seconds()), "ready_s": round1(ready.Seconds()),
		"churn_route_changes": c.routes, "churn_endpoint_changes": c.endpoints, "window_s": r.k.ScaleDuration.Seconds(),
		"adverse_counter_deltas": deltas, "activity": activity, "controller": ctrl, "haproxy": lb,
		"retried_writes": retries.n.Load()}
	for _, w := range []struct {
		name string
		v    any
	}{{"readiness.json", proof}, {"summary.json", res.Headline}, {"counters-before.json", before}, {"counters-after.json", after},
		{"startup-resources.json", startupRes}, {"resources.json", resources}, {"resource-samples.json", raw}} {
		if err := WriteJSON(r.out, filepath.Join("scale", w.name), w.v); err != nil {
			return err
		}
	}
	cleaned = true
	return r.deleteScale(nsN)
}

func round1(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

// createApp creates application j of namespace i: a Deployment at 0 replicas, a
// selector-less Service, its EndpointSlice with one ready address, an HTTPRoute.
func (r *run) createApp(i, j int, retries *retryCount) error {
	ns, app := scaleNS(i), fmt.Sprintf("app-%d", j)
	zero := int32(0)
	labels := map[string]string{"app": app}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec: appsv1.DeploymentSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "echo-basic"}}}}},
	}
	if err := retries.do("Deployment "+ns+"/"+app, func() error {
		_, err := r.kube.AppsV1().Deployments(ns).Create(r.ctx, dep, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if err := retries.do("Service "+ns+"/"+app, func() error {
		_, err := r.kube.CoreV1().Services(ns).Create(r.ctx, svc, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	if err := retries.do("EndpointSlice "+ns+"/"+app, func() error {
		_, err := r.kube.DiscoveryV1().EndpointSlices(ns).Create(r.ctx, r.scaleSlice(i, j, 0), metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	port := gwv1.PortNumber(80)
	prefix := gwv1.PathMatchPathPrefix
	path := "/"
	route := &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: r.parentRefs()},
			Hostnames:       []gwv1.Hostname{gwv1.Hostname(scaleHost(ns, app))},
			Rules: []gwv1.HTTPRouteRule{{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &prefix, Value: &path}}},
				BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
					Name: gwv1.ObjectName(app), Port: &port}}}}}},
		},
	}
	return retries.do("HTTPRoute "+ns+"/"+app, func() error {
		_, err := r.gw.GatewayV1().HTTPRoutes(ns).Create(r.ctx, route, metav1.CreateOptions{})
		return err
	})
}

// retryCount retries workload writes that fail transiently (an admission webhook
// that cannot answer, an overloaded API server) and counts them: a write a user
// would have seen fail is a negative measurement, not a broken run.
type retryCount struct {
	n        atomic.Int64
	mu       sync.Mutex
	firstErr string
}

func (c *retryCount) do(what string, write func() error) error {
	var err error
	for attempt := range 6 {
		err = write()
		if err == nil || (attempt > 0 && apierrors.IsAlreadyExists(err)) {
			return nil // a retried create may have landed before its error came back
		}
		if apierrors.IsAlreadyExists(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			break
		}
		c.n.Add(1)
		c.mu.Lock()
		if c.firstErr == "" {
			c.firstErr = what + ": " + err.Error()
		}
		c.mu.Unlock()
		time.Sleep(time.Duration(attempt+1) * time.Second)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (c *retryCount) first() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.firstErr
}

func (r *run) scaleSlice(i, j, gen int) *discoveryv1.EndpointSlice {
	app := fmt.Sprintf("app-%d", j)
	ready := true
	port := int32(8080)
	name := "http"
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-sim", Labels: map[string]string{
			discoveryv1.LabelServiceName: app, discoveryv1.LabelManagedBy: "haptic-bench"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{scaleAddr(i, j, gen)},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports: []discoveryv1.EndpointPort{{Name: &name, Port: &port}},
	}
}

// ReadinessProof is scale/readiness.json.
type ReadinessProof struct {
	Routes        int                  `json:"routes"`
	RoutesReady   int                  `json:"routes_accepted_resolved"`
	ConfigApplied map[string]bool      `json:"config_applied"`         // gateway → every pod runs the HAProxyCfg checksum
	RuntimeReads  map[string][]int     `json:"runtime_host_map_reads"` // ns/pod → route hostnames found per read
	Stage         string               `json:"stage"`                  // the gate reached last
	Checksums     map[string]Checksums `json:"checksums"`
}

var scaleHostRE = regexp.MustCompile(`app-\d+\.bench-scale-\d+\.example\.com`)

// scaleReady is the readiness proof: every route Accepted and ResolvedRefs by
// HAPTIC for its current generation; every Gateway pod runs its HAProxyCfg; two
// reads of each pod's runtime host.map hold exactly the routes' hostnames.
func (r *run) scaleReady(nsN, appN int, deadline time.Time) (ReadinessProof, error) {
	proof := ReadinessProof{Routes: nsN * appN, ConfigApplied: map[string]bool{}, RuntimeReads: map[string][]int{},
		Checksums: map[string]Checksums{}, Stage: "route-status"}
	want := map[string]bool{}
	for i := range nsN {
		for j := range appN {
			want[scaleHost(scaleNS(i), fmt.Sprintf("app-%d", j))] = true
		}
	}
	within := func() time.Duration { return max(time.Until(deadline), time.Second) }
	if err := r.eventually("every scale route Accepted and ResolvedRefs", within(), 2*time.Second, func() (bool, string) {
		n := 0
		for i := range nsN {
			list, err := r.gw.GatewayV1().HTTPRoutes(scaleNS(i)).List(r.ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, rt := range list.Items {
				if r.routeReady(&rt) {
					n++
				}
			}
		}
		proof.RoutesReady = n
		return n == proof.Routes, fmt.Sprintf("%d of %d", n, proof.Routes)
	}); err != nil {
		return proof, err
	}
	proof.Stage = "config-applied"
	for _, g := range r.k.Gateways {
		c, err := r.settledChecksums(g)
		if err != nil {
			return proof, err
		}
		proof.ConfigApplied[g.String()] = true
		proof.Checksums[g.String()] = c
	}
	proof.Stage = "runtime-maps"
	for _, g := range r.k.Gateways {
		pods, err := r.gatewayPods(g)
		if err != nil {
			return proof, err
		}
		for pod := range pods {
			key := g.Namespace + "/" + pod
			good := 0
			if err := r.eventually("two exact runtime host.map reads on "+key, within(), time.Second, func() (bool, string) {
				entries, err := r.runtimeMap(g.Namespace, pod, "host.map")
				if err != nil {
					good = 0
					return false, err.Error()
				}
				seen := map[string]bool{}
				for _, e := range entries {
					for _, h := range scaleHostRE.FindAllString(e.Key+" "+e.Value, -1) {
						seen[h] = true
					}
				}
				proof.RuntimeReads[key] = append(proof.RuntimeReads[key], len(seen))
				exact := len(seen) == len(want)
				for h := range seen {
					exact = exact && want[h]
				}
				if exact {
					good++
				} else {
					good = 0
				}
				return good >= 2, fmt.Sprintf("%d of %d hostnames", len(seen), len(want))
			}); err != nil {
				return proof, err
			}
		}
	}
	proof.Stage = "ready"
	return proof, nil
}

// routeReady: HAPTIC's parent status says Accepted and ResolvedRefs for the
// route's current generation, on every Gateway.
func (r *run) routeReady(rt *gwv1.HTTPRoute) bool {
	ok := 0
	for _, p := range rt.Status.Parents {
		if string(p.ControllerName) != r.controllerName() {
			continue
		}
		acc, res := false, false
		for _, c := range p.Conditions {
			cur := c.Status == metav1.ConditionTrue && c.ObservedGeneration >= rt.Generation
			acc = acc || (c.Type == string(gwv1.RouteConditionAccepted) && cur)
			res = res || (c.Type == string(gwv1.RouteConditionResolvedRefs) && cur)
		}
		if acc && res {
			ok++
		}
	}
	return ok == len(r.k.Gateways)
}

type churnResult struct {
	routes, endpoints, errors int
	firstErr                  string
}

// churn changes, until ctx ends, one random route's PathPrefix about every second
// and one random EndpointSlice's address about every two seconds (each interval
// jittered by ±50 %, as upstream's 1 s config and 2 s workload jitter).
func (r *run) churn(ctx context.Context, nsN, appN int) <-chan churnResult {
	out := make(chan churnResult, 1)
	var mu sync.Mutex
	var res churnResult
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		res.errors++
		if res.firstErr == "" {
			res.firstErr = err.Error()
		}
	}
	jitter := func(d time.Duration) time.Duration { return d/2 + time.Duration(rand.Int64N(int64(d))) }
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		gen := 0
		for ctx.Err() == nil {
			gen++
			i, j := rand.IntN(nsN), rand.IntN(appN)
			ns, app := scaleNS(i), fmt.Sprintf("app-%d", j)
			rt, err := r.gw.GatewayV1().HTTPRoutes(ns).Get(ctx, app, metav1.GetOptions{})
			if err == nil {
				p := fmt.Sprintf("/v%d", gen)
				rt.Spec.Rules[0].Matches[0].Path.Value = &p
				_, err = r.gw.GatewayV1().HTTPRoutes(ns).Update(ctx, rt, metav1.UpdateOptions{})
			}
			if err != nil {
				fail(err)
			} else {
				mu.Lock()
				res.routes++
				mu.Unlock()
			}
			sleepCtx(ctx, jitter(time.Second))
		}
	}()
	go func() {
		defer wg.Done()
		gen := 0
		for ctx.Err() == nil {
			gen++
			i, j := rand.IntN(nsN), rand.IntN(appN)
			s := r.scaleSlice(i, j, gen)
			cur, err := r.kube.DiscoveryV1().EndpointSlices(scaleNS(i)).Get(ctx, s.Name, metav1.GetOptions{})
			if err == nil {
				cur.Endpoints = s.Endpoints
				_, err = r.kube.DiscoveryV1().EndpointSlices(scaleNS(i)).Update(ctx, cur, metav1.UpdateOptions{})
			}
			if err != nil {
				fail(err)
			} else {
				mu.Lock()
				res.endpoints++
				mu.Unlock()
			}
			sleepCtx(ctx, jitter(2*time.Second))
		}
	}()
	go func() {
		wg.Wait()
		out <- res
	}()
	return out
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// deleteScale removes the scale namespaces and waits (bounded) until they are gone
// and every Gateway's runtime host.map holds none of their hostnames.
func (r *run) deleteScale(nsN int) error {
	for i := range nsN {
		if err := r.kube.CoreV1().Namespaces().Delete(r.ctx, scaleNS(i), metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	if err := r.eventually("scale namespaces gone", 10*time.Minute, 2*time.Second, func() (bool, string) {
		l, err := r.kube.CoreV1().Namespaces().List(r.ctx, metav1.ListOptions{LabelSelector: runLabel + "=" + r.runID})
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, ns := range l.Items {
			if strings.HasPrefix(ns.Name, "bench-scale-") {
				left = append(left, ns.Name)
			}
		}
		sort.Strings(left)
		return len(left) == 0, fmt.Sprint(len(left), " left")
	}); err != nil {
		return err
	}
	for _, g := range r.k.Gateways {
		pods, err := r.gatewayPods(g)
		if err != nil {
			return err
		}
		for pod := range pods {
			if err := r.eventually("no scale hostnames in "+pod+"'s runtime host.map", 3*time.Minute, 2*time.Second, func() (bool, string) {
				entries, err := r.runtimeMap(g.Namespace, pod, "host.map")
				if err != nil {
					return false, err.Error()
				}
				n := 0
				for _, e := range entries {
					if scaleHostRE.MatchString(e.Key) {
						n++
					}
				}
				return n == 0, fmt.Sprint(n, " left")
			}); err != nil {
				return err
			}
		}
	}
	return nil
}
