//go:build benchgw

package bench

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ProbeSample is one route's propagation through one Gateway.
type ProbeSample struct {
	Gateway    string    `json:"gateway"`
	Route      int       `json:"route"`
	At         time.Time `json:"at"`
	LatencyMs  float64   `json:"latency_ms"` // create returned → first 200
	ApplyMs    float64   `json:"apply_ms"`   // the create call itself (admission included)
	Polls      int       `json:"polls"`
	Unexpected int       `json:"unexpected"` // responses other than 404 and 200
}

// Unexpected is a response other than 404 (not yet) or 200 (propagated).
type Unexpected struct {
	Gateway string    `json:"gateway"`
	Route   int       `json:"route"`
	At      time.Time `json:"at"`
	Status  int       `json:"status"`
	Error   string    `json:"error,omitempty"`
	Body    string    `json:"body,omitempty"`
}

const probeNS = "bench-probe"

// probeTarget is one place a probe's object is polled through: a Gateway's
// address, or a default-fleet HAProxy pod for Ingresses.
type probeTarget struct {
	label, addr, port string
}

// probeWork is one variant of the probe: where its artifacts go, the host suffix
// of object i (<i><suffix>.example.com, path /<i>), how object i is created and
// which targets must answer 200 for it.
type probeWork struct {
	dir, ns, hostSuffix string
	create              func(i int) error
	targets             []probeTarget
}

// probe applies BENCH_PROBE_ROUTES HTTPRoutes one by one (upstream's probe
// workload) and measures, for each, the time from the create call's return to
// the first 200 through every Gateway, polling every 5 ms.
func (r *run) probe(res *ScenarioResult) error {
	w := probeWork{dir: "probe", ns: probeNS, hostSuffix: "-route", create: func(i int) error {
		_, err := r.gw.GatewayV1().HTTPRoutes(probeNS).Create(r.ctx, r.probeRoute(i), metav1.CreateOptions{})
		return err
	}}
	for _, g := range r.k.Gateways {
		w.targets = append(w.targets, probeTarget{label: g.String(), addr: r.addrs[g], port: "80"})
	}
	if err := r.probeLoop(res, w); err != nil {
		return err
	}
	// Upstream's cleanup: the routes go; the namespace goes at the end of the run.
	routes := r.gw.GatewayV1().HTTPRoutes(probeNS)
	return r.deleteAll("HTTPRoutes", func() error {
		return routes.DeleteCollection(r.ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}, func() (int, error) {
		l, err := routes.List(r.ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	})
}

const probeIngressNS = "bench-probe-ingress"

// probeIngress is the probe with the ingress library: BENCH_PROBE_ROUTES
// Ingresses (class haptic-bench) one by one, each with host
// <i>-ingress.example.com and a Prefix path /<i> to the pre-created backend,
// polled through every pod of the default fleet's HAProxy (port 8080).
func (r *run) probeIngress(res *ScenarioResult) error {
	pods, err := r.kube.CoreV1().Pods(r.ctrlNS).List(r.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=loadbalancer"})
	if err != nil {
		return err
	}
	w := probeWork{dir: "probe-ingress", ns: probeIngressNS, hostSuffix: "-ingress", create: func(i int) error {
		_, err := r.kube.NetworkingV1().Ingresses(probeIngressNS).Create(r.ctx, probeIngressObject(i), metav1.CreateOptions{})
		return err
	}}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" && podReady(&p) {
			w.targets = append(w.targets, probeTarget{label: p.Name, addr: p.Status.PodIP, port: "8080"})
		}
	}
	if len(w.targets) == 0 {
		return fmt.Errorf("no ready default-fleet HAProxy pod in %s", r.ctrlNS)
	}
	if err := r.probeLoop(res, w); err != nil {
		return err
	}
	ings := r.kube.NetworkingV1().Ingresses(probeIngressNS)
	return r.deleteAll("Ingresses", func() error {
		return ings.DeleteCollection(r.ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}, func() (int, error) {
		l, err := ings.List(r.ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	})
}

// deleteAll deletes a probe's objects. One DeleteCollection of 3,000 objects can
// outlast the API server's request timeout under load (the stream is reset while
// the deletes go on), so a failed call is retried until nothing is left, for up to
// 5 minutes; what it deleted before failing stays deleted.
func (r *run) deleteAll(what string, deleteCollection func() error, remaining func() (int, error)) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		err := deleteCollection()
		if err == nil {
			return nil
		}
		if n, lerr := remaining(); lerr == nil && n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("deleting the probe's %s: %w", what, err)
		}
		r.logf("deleting the probe's %s: %v; retrying", what, err)
		select {
		case <-r.ctx.Done():
			return r.ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

func probeIngressObject(i int) *networkingv1.Ingress {
	class := "haptic-bench"
	prefix := networkingv1.PathTypePrefix
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: strconv.Itoa(i) + "-ingress"},
		Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
			Host: strconv.Itoa(i) + "-ingress.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/" + strconv.Itoa(i), PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "backend", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}},
	}
}

// probeLoop creates w's objects one by one and samples each through every
// target; it writes <w.dir>/samples.json, unexpected.json, summary.json and the
// resource samples.
func (r *run) probeLoop(res *ScenarioResult, w probeWork) error {
	if err := r.createNamespace(w.ns); err != nil {
		return err
	}
	if err := r.createBackend(w.ns, false); err != nil {
		return err
	}
	smp := r.startSampler()
	before, beforeErr := r.metrics()
	var samples []ProbeSample
	var unexpected []Unexpected
	deadline := time.Now().Add(r.k.ProbeTimeout)
	var harness error
	for i := range r.k.ProbeRoutes {
		if time.Now().After(deadline) {
			harness = fmt.Errorf("probe timeout %s reached after %d routes", r.k.ProbeTimeout, i)
			break
		}
		applyStart := time.Now()
		if err := w.create(i); err != nil {
			harness = fmt.Errorf("create %s object %d: %w", w.dir, i, err)
			break
		}
		applied := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var routeErr error
		for _, tg := range w.targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, un, err := r.probeOne(tg, strconv.Itoa(i)+w.hostSuffix+".example.com", i, applied)
				s.ApplyMs = ms(applied.Sub(applyStart))
				mu.Lock()
				defer mu.Unlock()
				unexpected = append(unexpected, un...)
				if err != nil {
					routeErr = err
					return
				}
				samples = append(samples, s)
			}()
		}
		wg.Wait()
		if routeErr != nil {
			harness = routeErr
			break
		}
		if i%50 == 0 {
			last := samples[len(samples)-1]
			r.logf("%s: route %d: %.1f ms (apply %.1f ms), unexpected so far %d", w.dir, i, last.LatencyMs, last.ApplyMs, len(unexpected))
		}
	}
	raw, resources := smp.finish()
	after, afterErr := r.metrics()
	var lat []time.Duration
	for _, s := range samples {
		lat = append(lat, time.Duration(s.LatencyMs*float64(time.Millisecond)))
	}
	sum := Summarize(lat)
	var apply []time.Duration
	for _, s := range samples {
		apply = append(apply, time.Duration(s.ApplyMs*float64(time.Millisecond)))
	}
	// Late samples measure propagation at the full route count.
	var last10 []time.Duration
	if n := len(lat); n > 0 {
		last10 = lat[n-max(1, n/10):]
	}
	fivexx := 0
	for _, u := range unexpected {
		if u.Status >= 500 {
			fivexx++
		}
	}
	perTarget := len(samples) / max(1, len(w.targets))
	res.Headline = map[string]any{"routes": perTarget, "latency": sum,
		"latency_last_10pct": Summarize(last10), "apply": Summarize(apply), "unexpected": len(unexpected), "http_5xx": fivexx}
	routes := make([]int, len(samples))
	for i, s := range samples {
		routes[i] = s.Route
	}
	if flat := FlatnessOf(routes, lat, probeFlatBlock); flat.BlockRoutes > 0 {
		res.Headline["flatness"] = flat
		var p50s []string
		for _, b := range flat.Blocks {
			p50s = append(p50s, fmt.Sprintf("%.1f", b.P50Ms))
		}
		r.logf("%s: p50 per %d routes %s ms; last/first p50 %.2f, mean %.2f", w.dir, probeFlatBlock,
			strings.Join(p50s, ", "), flat.P50Ratio, flat.MeanRatio)
	}
	if beforeErr == nil && afterErr == nil {
		res.Headline["controller"] = controllerWork(before, after, perTarget)
	} else {
		r.logf("%s: controller metrics not read (%v, %v): no renders, reloads or stages in the summary", w.dir, beforeErr, afterErr)
	}
	res.MeasuredPass = len(unexpected) == 0 && harness == nil
	if len(unexpected) > 0 {
		res.Reasons = append(res.Reasons, fmt.Sprintf("%d unexpected responses (%d of them 5xx)", len(unexpected), fivexx))
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"samples.json", samples}, {"unexpected.json", unexpected}, {"summary.json", res.Headline},
		{"resources.json", resources}, {"resource-samples.json", raw}} {
		if err := WriteJSON(r.out, filepath.Join(w.dir, f.name), f.v); err != nil {
			return err
		}
	}
	return harness
}

// probeFlatBlock is the block of routes the flatness compares (the first and the
// last 500 routes, as the change-latency target is written).
const probeFlatBlock = 500

// probeOne polls object i through target tg with Host host until the first 200
// (10,000 polls at most, as upstream).
func (r *run) probeOne(tg probeTarget, host string, i int, applied time.Time) (ProbeSample, []Unexpected, error) {
	path := "/" + strconv.Itoa(i)
	var un []Unexpected
	for poll := 1; poll <= 10000; poll++ {
		code, _, body, err := r.get(tg.addr, tg.port, host, path)
		switch {
		case err == nil && code == 200:
			now := time.Now()
			return ProbeSample{Gateway: tg.label, Route: i, At: now, LatencyMs: ms(now.Sub(applied)), Polls: poll, Unexpected: len(un)}, un, nil
		case err == nil && code == 404:
		default:
			u := Unexpected{Gateway: tg.label, Route: i, At: time.Now(), Status: code, Body: body}
			if err != nil {
				u.Error = err.Error()
			}
			un = append(un, u)
		}
		if r.ctx.Err() != nil {
			break
		}
		time.Sleep(r.k.ProbeIntervalFixed)
	}
	return ProbeSample{}, un, fmt.Errorf("%s %d through %s: no 200 after 10000 polls", host, i, tg.label)
}

// probeRoute is upstream's probe route i: host <i>-route.example.com, PathPrefix
// /<i> to the backend and / to a Service that does not exist, both with request-
// and response-header add filters, attached to every Gateway.
func (r *run) probeRoute(i int) *gwv1.HTTPRoute {
	port := gwv1.PortNumber(80)
	filters := []gwv1.HTTPRouteFilter{
		{Type: gwv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gwv1.HTTPHeaderFilter{
			Add: []gwv1.HTTPHeader{{Name: "added-header", Value: "added-value"}}}},
		{Type: gwv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gwv1.HTTPHeaderFilter{
			Add: []gwv1.HTTPHeader{{Name: "added-resp-header", Value: "added-resp-value"}}}},
	}
	prefix := gwv1.PathMatchPathPrefix
	rule := func(svc, path string) gwv1.HTTPRouteRule {
		p := path
		return gwv1.HTTPRouteRule{
			Matches:     []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &prefix, Value: &p}}},
			Filters:     filters,
			BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(svc), Port: &port}}}},
		}
	}
	return &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: strconv.Itoa(i) + "-route"},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: r.parentRefs()},
			Hostnames:       []gwv1.Hostname{gwv1.Hostname(strconv.Itoa(i) + "-route.example.com")},
			Rules:           []gwv1.HTTPRouteRule{rule("backend", "/"+strconv.Itoa(i)), rule("invalid-backend", "/")},
		},
	}
}

func (r *run) parentRefs() []gwv1.ParentReference {
	var refs []gwv1.ParentReference
	for _, g := range r.k.Gateways {
		ns := gwv1.Namespace(g.Namespace)
		refs = append(refs, gwv1.ParentReference{Name: gwv1.ObjectName(g.Name), Namespace: &ns})
	}
	return refs
}

// createBackend creates upstream's backend Deployment and Service (port 80 →
// 8080; with twoPorts also 8080 → 8081, as routechange's) with echo-basic in
// place of hyper-server, and waits for ready endpoints.
func (r *run) createBackend(ns string, twoPorts bool) error {
	echo := func(name, httpPort, h2cPort string) corev1.Container {
		return corev1.Container{Name: name, Image: "echo-basic", Env: []corev1.EnvVar{
			{Name: "HTTP_PORT", Value: httpPort}, {Name: "H2C_PORT", Value: h2cPort},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		}, ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString(httpPort)}}, PeriodSeconds: 2}}
	}
	containers := []corev1.Container{echo("backend", "8080", "3001")}
	ports := []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}
	if twoPorts {
		containers = append(containers, echo("backend-alt", "8081", "3002"))
		ports = append(ports, corev1.ServicePort{Name: "http-alt", Port: 8080, TargetPort: intstr.FromInt32(8081)})
	}
	for i := range containers { // probes need a numeric port here
		p, _ := strconv.Atoi(containers[i].Env[0].Value)
		containers[i].ReadinessProbe.HTTPGet.Port = intstr.FromInt32(int32(p))
	}
	one := int32(1)
	labels := map[string]string{"app": "backend"}
	if _, err := r.kube.AppsV1().Deployments(ns).Create(r.ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "backend"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: containers}}},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("backend Deployment: %w", err)
	}
	if _, err := r.kube.CoreV1().Services(ns).Create(r.ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "backend"},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: ports},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("backend Service: %w", err)
	}
	return r.eventually("a ready backend endpoint in "+ns, 2*time.Minute, 200*time.Millisecond, func() (bool, string) {
		out, err := r.kubectl("-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=backend",
			"-o", "jsonpath={.items[*].endpoints[?(@.conditions.ready==true)].addresses[*]}")
		return err == nil && out != "", out
	})
}

// controllerWork is what the controller did for the probe's routes, from two scrapes
// of its metrics: renders per route by fleet (haptic_fleet_renders_total), the
// HAProxy reloads it counted, and each change stage's histogram
// (haptic_change_stage_seconds, from the first watch event): its mean, count and
// the changes that reached the stage within each bucket's bound (ms, cumulative).
func controllerWork(before, after map[string]float64, routes int) map[string]any {
	renders := map[string]float64{}
	reloads := 0.0
	stages := map[string]any{} // of stages some change reached
	stage := func(series string) map[string]any {
		name := seriesLabel(series, "stage")
		if st, ok := stages[name].(map[string]any); ok {
			return st
		}
		st := map[string]any{"within_ms": map[string]float64{}}
		stages[name] = st
		return st
	}
	for series, v := range after {
		d := v - before[series]
		switch {
		case strings.HasPrefix(series, "haptic_fleet_renders_total{"):
			renders[seriesLabel(series, "fleet")] += d / float64(max(1, routes))
		case strings.HasPrefix(series, "haptic_haproxy_reloads_total"):
			reloads += d
		case strings.HasPrefix(series, "haptic_change_stage_seconds_sum{"):
			count := after[strings.Replace(series, "_sum{", "_count{", 1)] - before[strings.Replace(series, "_sum{", "_count{", 1)]
			if count > 0 {
				st := stage(series)
				st["mean_ms"], st["count"] = 1000*d/count, count
			}
		case strings.HasPrefix(series, "haptic_change_stage_seconds_bucket{") && d > 0:
			le := seriesLabel(series, "le")
			if sec, err := strconv.ParseFloat(le, 64); err == nil {
				le = strconv.FormatFloat(1000*sec, 'f', -1, 64)
			}
			stage(series)["within_ms"].(map[string]float64)[le] = d
		}
	}
	return map[string]any{"renders_per_route_by_fleet": renders, "haproxy_reloads": reloads, "change_stages": stages}
}

// seriesLabel is the value of label name in a series "metric{a=\"x\",...}".
func seriesLabel(series, name string) string {
	i := strings.Index(series, name+`="`)
	if i < 0 {
		return ""
	}
	rest := series[i+len(name)+2:]
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return rest
}
