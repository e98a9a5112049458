package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Label values of haptic_reconciliation_total{result}.
const (
	ResultSuccess         = "success"
	ResultRenderError     = "render_error"
	ResultValidationError = "validation_error"
	ResultDeployError     = "deploy_error"
)

// Label values of haptic_deploy_apply_total{mode,result}.
const (
	ModeRuntime = "runtime" // applied over the runtime API, no reload
	ModeReload  = "reload"  // applied by reloading HAProxy

	ApplySuccess = "success"
	ApplyError   = "error"
)

// Label values of haptic_change_stage_seconds{stage}: how long after the first watch
// event of a change each stage ended. A reconcile that covers several changes counts
// from the earliest.
const (
	StageRendered      = "rendered"       // the fleet's bundle is rendered
	StageValidated     = "validated"      // it passed validation (or needed none)
	StagePlanned       = "planned"        // handed to the fleet's deployer
	StageApplied       = "applied"        // a pod of the fleet runs it (one observation per pod)
	StageStatusWritten = "status_written" // route and Gateway status for it is written
)

// Label values of haptic_resource_events_total{kind}.
const (
	KindAdd    = "add"
	KindUpdate = "update"
	KindDelete = "delete"
)

// Metrics holds every controller metric. Create it with New; the zero value is not
// usable. All fields are safe for concurrent use.
type Metrics struct {
	// Registry holds exactly the metrics below plus the Go and process collectors.
	Registry *prometheus.Registry

	// Reconciliation: one observation per reconcile (render → validate → deploy).
	ReconciliationDuration prometheus.Histogram   // haptic_reconciliation_duration_seconds
	ReconciliationTotal    *prometheus.CounterVec // haptic_reconciliation_total{result}

	// Rendering.
	RenderDuration   prometheus.Histogram // haptic_render_duration_seconds
	Renders          prometheus.Counter   // haptic_renders_total
	ValidationErrors prometheus.Counter   // haptic_validation_errors_total
	// FleetRenders counts renders per fleet ("default" or a Gateway's namespace/name);
	// FleetRendersSkipped the reconciles in which a fleet did not render because no
	// changed object is one its render reads (internal/fleetscope).
	FleetRenders        *prometheus.CounterVec // haptic_fleet_renders_total{fleet}
	FleetRendersSkipped *prometheus.CounterVec // haptic_fleet_renders_skipped_total{fleet}
	// RenderFragments counts the fragments of fleet renders (files, units, shared
	// values) taken from earlier renders (reused) and rendered anew.
	RenderFragments *prometheus.CounterVec // haptic_render_fragments_total{fleet,outcome}
	// ChangeStage is the time from a change's first watch event to the end of each
	// stage of its way to the pods (see the Stage constants).
	ChangeStage *prometheus.HistogramVec // haptic_change_stage_seconds{stage}
	// ObjectsLeftOut counts the objects the last render of a fleet left out, by resource.
	ObjectsLeftOut *prometheus.GaugeVec // haptic_objects_left_out{fleet,resource}

	// Deployment: one DeploymentDuration observation per pod deploy.
	DeploymentDuration          prometheus.Histogram   // haptic_deployment_duration_seconds
	HAProxyReloads              *prometheus.CounterVec // haptic_haproxy_reloads_total{pod,reason}
	DeployApply                 *prometheus.CounterVec // haptic_deploy_apply_total{mode,result}
	FastPathFailures            prometheus.Counter     // haptic_fast_path_failures_total
	PlannedAhead                prometheus.Counter     // haptic_deploy_planned_ahead_total
	DeploymentRuntimeDivergence prometheus.Counter     // haptic_deployment_runtime_divergence_total
	RuntimeMapDivergence        prometheus.Counter     // haptic_runtime_map_divergence_total
	HAProxyPods                 prometheus.Gauge       // haptic_haproxy_pods
	Leader                      prometheus.Gauge       // haptic_leader

	// Watching.
	DebounceFired  *prometheus.CounterVec // haptic_debounce_fired_total{resource}
	ResourceEvents *prometheus.CounterVec // haptic_resource_events_total{resource,kind}
	WatchedObjects *prometheus.GaugeVec   // haptic_watched_objects{resource}
	// WatchEventsDropped counts watch events dropped before the debouncer (no render):
	// reason "unchanged" is an update that changed only status or server-kept metadata.
	WatchEventsDropped *prometheus.CounterVec // haptic_watch_events_dropped_total{resource,reason}
	// WatchRestarts counts failed lists and watches (each is listed and watched again).
	WatchRestarts *prometheus.CounterVec // haptic_watch_restarts_total{resource}
	// WatchUnserved is 1 for a watched resource the API server does not serve (its
	// CRD missing or older): no informer, its store stays empty.
	WatchUnserved *prometheus.GaugeVec // haptic_watch_resource_unserved{resource}

	// Event bus (fed through the Hooks methods).
	EventsPublished           *prometheus.CounterVec // haptic_events_published_total{type}
	EventsDropped             prometheus.Counter     // haptic_events_dropped_total
	EventsDroppedCritical     prometheus.Counter     // haptic_events_dropped_critical_total
	EventsDroppedBySubscriber *prometheus.CounterVec // haptic_events_dropped_by_subscriber_total{subscriber}
	EventSubscribers          prometheus.Gauge       // haptic_event_subscribers

	// Status: writes of Gateway API and Ingress status (unchanged statuses are not written).
	StatusWrites *prometheus.CounterVec // haptic_status_writes_total{kind}

	// Admission webhook: one observation per AdmissionReview.
	WebhookRequests *prometheus.CounterVec // haptic_webhook_requests_total{resource,result}
	WebhookDuration prometheus.Histogram   // haptic_webhook_request_duration_seconds
}

// Bucket boundaries, in seconds.
var (
	reconcileBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2, 5, 10, 30, 60}
	deployBuckets    = []float64{.01, .025, .05, .1, .25, .5, 1, 2, 3, 5, 10, 30, 60, 120}
	changeBuckets    = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	renderBuckets    = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
)

// New creates the metrics on a fresh registry. Label combinations whose values are
// known in advance (reconcile results, apply modes and results) start at zero so that
// rate() works from the first scrape.
func New() *Metrics {
	r := prometheus.NewRegistry()
	f := factory{r}
	m := &Metrics{
		Registry: r,

		ReconciliationDuration: f.histogram("haptic_reconciliation_duration_seconds",
			"Duration of a whole reconciliation: render, validate and hand-off to the deployer.", reconcileBuckets),
		ReconciliationTotal: f.counterVec("haptic_reconciliation_total",
			"Reconciliations by result (success, render_error, validation_error, deploy_error).", "result"),

		RenderDuration: f.histogram("haptic_render_duration_seconds",
			"Duration of rendering the configuration from the templates.", renderBuckets),
		Renders: f.counter("haptic_renders_total",
			"Renders of the configuration, successful or not."),
		ValidationErrors: f.counter("haptic_validation_errors_total",
			"Rendered configurations rejected by validation."),
		FleetRenders: f.counterVec("haptic_fleet_renders_total",
			"Renders per fleet (default: the podSelector's pods; namespace/name: a Gateway's pods).", "fleet"),
		FleetRendersSkipped: f.counterVec("haptic_fleet_renders_skipped_total",
			"Reconciles in which a fleet did not render: nothing it reads changed.", "fleet"),
		RenderFragments: f.counterVec("haptic_render_fragments_total",
			"Fragments of fleet renders (files, units, shared values) reused from earlier renders or rendered anew (outcome: reused, rendered).", "fleet", "outcome"),
		ChangeStage: f.histogramVec("haptic_change_stage_seconds",
			"Time from the first watch event of a change to the end of each stage: rendered, validated, planned, applied (per pod), status_written.",
			changeBuckets, "stage"),
		ObjectsLeftOut: f.gaugeVec("haptic_objects_left_out",
			"Watched objects the last render of a fleet left out (unsafe or failing input), by fleet and resource.", "fleet", "resource"),

		DeploymentDuration: f.histogram("haptic_deployment_duration_seconds",
			"Duration of deploying a configuration to one HAProxy pod.", deployBuckets),
		HAProxyReloads: f.counterVec("haptic_haproxy_reloads_total",
			"HAProxy reloads triggered by the controller, by pod and reason.", "pod", "reason"),
		DeployApply: f.counterVec("haptic_deploy_apply_total",
			"Applies to HAProxy pods by mode (runtime, reload) and result.", "mode", "result"),
		FastPathFailures: f.counter("haptic_fast_path_failures_total",
			"Runtime-API (reload-free) applies that failed and fell back to a reload."),
		PlannedAhead: f.counter("haptic_deploy_planned_ahead_total",
			"Runtime applies to a pod whose plan was made at the change's admission, before the change was stored."),
		DeploymentRuntimeDivergence: f.counter("haptic_deployment_runtime_divergence_total",
			"Deployments where a pod's running state diverged from the deployed configuration."),
		RuntimeMapDivergence: f.counter("haptic_runtime_map_divergence_total",
			"Runtime map contents found to differ from the deployed map files."),
		HAProxyPods: f.gauge("haptic_haproxy_pods",
			"HAProxy pods currently discovered by the controller."),
		Leader: f.gauge("haptic_leader",
			"1 while this replica leads (deploys, writes status); 0 while it waits."),

		DebounceFired: f.counterVec("haptic_debounce_fired_total",
			"Debouncer firings (each triggers a reconciliation), by watched resource.", "resource"),
		ResourceEvents: f.counterVec("haptic_resource_events_total",
			"Watch events received, by watched resource and kind (add, update, delete).", "resource", "kind"),
		WatchedObjects: f.gaugeVec("haptic_watched_objects",
			"Objects currently held in the store, by watched resource.", "resource"),
		WatchEventsDropped: f.counterVec("haptic_watch_events_dropped_total",
			"Watch events dropped before the debouncer, triggering no render, by watched resource and reason (unchanged: only status or server-kept metadata changed).", "resource", "reason"),

		WatchUnserved: f.gaugeVec("haptic_watch_resource_unserved",
			"1 for a watched resource the API server does not serve (its CRD is missing or of a release without that version): it is not watched and its store stays empty; the watch restarts when it appears.", "resource"),
		WatchRestarts: f.counterVec("haptic_watch_restarts_total",
			"Lists and watches that failed and were started again (the watch was reset, its resourceVersion expired, the API server was away), by watched resource.", "resource"),

		EventsPublished: f.counterVec("haptic_events_published_total",
			"Events published on the in-process event bus, by event type.", "type"),
		EventsDropped: f.counter("haptic_events_dropped_total",
			"Events dropped because a subscriber's buffer was full (one per subscriber missed)."),
		EventsDroppedCritical: f.counter("haptic_events_dropped_critical_total",
			"Dropped events that were flagged critical; each restarts that subscriber from authoritative state."),
		EventsDroppedBySubscriber: f.counterVec("haptic_events_dropped_by_subscriber_total",
			"Events dropped, by subscriber.", "subscriber"),
		EventSubscribers: f.gauge("haptic_event_subscribers",
			"Current subscriptions on the in-process event bus."),

		StatusWrites: f.counterVec("haptic_status_writes_total",
			"Status subresource writes by kind (GatewayClass, Gateway, HTTPRoute, GRPCRoute, Ingress).", "kind"),

		WebhookRequests: f.counterVec("haptic_webhook_requests_total",
			"Admission reviews by resource (group/resource) and result: allowed, denied, error (undecided: the API server applied the failurePolicy), or forwarded (relayed to the leading replica, which counts its decision).",
			"resource", "result"),
		WebhookDuration: f.histogram("haptic_webhook_request_duration_seconds",
			"Time to decide one admission review (a render of the configuration with the proposed object).", reconcileBuckets),
	}
	r.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)

	for _, res := range []string{ResultSuccess, ResultRenderError, ResultValidationError, ResultDeployError} {
		m.ReconciliationTotal.WithLabelValues(res)
	}
	for _, mode := range []string{ModeRuntime, ModeReload} {
		for _, res := range []string{ApplySuccess, ApplyError} {
			m.DeployApply.WithLabelValues(mode, res)
		}
	}
	return m
}

// Handler serves the registry in the Prometheus exposition formats, with the handler's
// own request counters.
func (m *Metrics) Handler() http.Handler {
	return promhttp.InstrumentMetricHandler(m.Registry,
		promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{
			Registry:          m.Registry,
			ErrorHandling:     promhttp.ContinueOnError,
			EnableOpenMetrics: true,
		}))
}

// ObserveReconciliation records one reconciliation's duration and result (one of the
// Result constants).
func (m *Metrics) ObserveReconciliation(d time.Duration, result string) {
	m.ReconciliationDuration.Observe(d.Seconds())
	m.ReconciliationTotal.WithLabelValues(result).Inc()
}

// ObserveRender records one render's duration.
func (m *Metrics) ObserveRender(d time.Duration) {
	m.RenderDuration.Observe(d.Seconds())
	m.Renders.Inc()
}

// ObserveDeployment records one deploy to one pod: its duration and the apply's mode
// (ModeRuntime or ModeReload) and result (ApplySuccess or ApplyError).
func (m *Metrics) ObserveDeployment(d time.Duration, mode, result string) {
	m.DeploymentDuration.Observe(d.Seconds())
	m.DeployApply.WithLabelValues(mode, result).Inc()
}

// ForgetPod removes the per-pod series of a pod that is gone, so that pod churn does
// not grow the series count without bound.
func (m *Metrics) ForgetPod(pod string) {
	m.HAProxyReloads.DeletePartialMatch(prometheus.Labels{"pod": pod})
}

// EventPublished implements events.Hooks.
func (m *Metrics) EventPublished(eventType string) {
	m.EventsPublished.WithLabelValues(eventType).Inc()
}

// EventDropped implements events.Hooks.
func (m *Metrics) EventDropped(subscriber, _ string, critical bool) {
	m.EventsDropped.Inc()
	if critical {
		m.EventsDroppedCritical.Inc()
	}
	m.EventsDroppedBySubscriber.WithLabelValues(subscriber).Inc()
}

// SubscribersChanged implements events.Hooks.
func (m *Metrics) SubscribersChanged(n int) {
	m.EventSubscribers.Set(float64(n))
}

// factory creates collectors and registers them, panicking on a duplicate name (a
// programming error caught by the package's tests).
type factory struct{ r *prometheus.Registry }

func (f factory) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	f.r.MustRegister(h)
	return h
}

func (f factory) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	f.r.MustRegister(h)
	return h
}

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.r.MustRegister(c)
	return c
}

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.r.MustRegister(c)
	return c
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.r.MustRegister(g)
	return g
}

func (f factory) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	f.r.MustRegister(g)
	return g
}
