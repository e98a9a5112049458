package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/events"
	"github.com/haproxy-haptic/haptic/internal/metrics"
	"github.com/haproxy-haptic/haptic/internal/publish"
	"github.com/haproxy-haptic/haptic/internal/status/writer"
)

// ConfigGVR is the HAProxyTemplateConfig resource.
var ConfigGVR = schema.GroupVersionResource{Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Resource: "haproxytemplateconfigs"}

// Options configure the controller.
type Options struct {
	Rest          *rest.Config
	Namespace     string
	ConfigName    string
	MetricsAddr   string // e.g. ":9090"; empty disables
	HAProxyBinary string
	SchemaDir     string
	Log           *slog.Logger
	// AgentHTTP reaches the HAProxy pods' agents (nil: a default client).
	AgentHTTP *http.Client
	// LeaderElection, when set, lets only the leading replica deploy.
	LeaderElection *LeaderElection
	// WebhookListener, when set, serves admission reviews over HTTPS with the
	// certificate in WebhookCertDir (tls.crt, tls.key).
	WebhookListener net.Listener
	WebhookCertDir  string
	// PodName is this replica's pod in Namespace (POD_NAME): the leader labels it.
	PodName string
}

// Controller is a running `haptic run`.
type Controller struct {
	opts     Options
	kube     kubernetes.Interface
	dyn      dynamic.Interface
	meta     metadata.Interface
	metrics  *metrics.Metrics
	bus      *events.Bus
	recorder record.EventRecorder
	log      *slog.Logger
	status   *writer.Manager           // Gateway API and Ingress status (gatewaystatus.go)
	current  atomic.Pointer[iteration] // the running iteration, for admission (admission.go)
	standby  atomic.Pointer[iteration] // stores for admission before this replica leads (standby.go)
	// standbyDone stops the standby once the leader's stores are ready.
	standbyDone standbyStopper
}

// Run runs the controller until ctx ends.
func Run(ctx context.Context, opts Options) error {
	c, err := newController(opts)
	if err != nil {
		return err
	}
	return c.run(ctx)
}

func newController(opts Options) (*Controller, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	kube, err := kubernetes.NewForConfig(opts.Rest)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(opts.Rest)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	meta, err := metadata.NewForConfig(opts.Rest)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	m := metrics.New()
	broadcaster := record.NewBroadcaster()
	// Events go to the namespace of the object they are about (a left-out route is in
	// its team's namespace), so the sink is not bound to one namespace.
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events(metav1.NamespaceAll)})
	recorder := broadcaster.NewRecorder(scheme(), corev1.EventSource{Component: "haptic"})
	return &Controller{opts: opts, kube: kube, dyn: dyn, meta: meta, metrics: m, bus: events.NewBus(m),
		recorder: recorder, log: opts.Log}, nil
}

func (c *Controller) run(ctx context.Context) error {
	if c.opts.MetricsAddr != "" {
		ln, err := net.Listen("tcp", c.opts.MetricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", c.metrics.Handler())
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		c.log.Info("metrics listening", "addr", ln.Addr().String())
	}
	if c.opts.WebhookListener != nil {
		go c.serveWebhook(ctx)
		sctx, stop := context.WithCancel(ctx)
		c.standbyDone.stop = stop
		go c.runStandby(sctx)
	}
	// Every replica serves metrics (and admission); only the leader goes on.
	parent := ctx
	c.labelLeader(ctx, false)
	ctx, err := c.lead(ctx)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return c.leadershipEnded(parent)
	}
	c.labelLeader(ctx, true)
	if err := c.startGatewayStatus(ctx); err != nil {
		return fmt.Errorf("status writer: %w", err)
	}
	configs, err := c.watchConfig(ctx)
	if err != nil {
		return err
	}
	c.log.Info("waiting for config", "namespace", c.opts.Namespace, "name", c.opts.ConfigName)

	var current *iteration
	var done chan error
	for {
		select {
		case <-ctx.Done():
			if current != nil {
				current.stop()
				<-done
			}
			return c.leadershipEnded(parent)
		case err := <-done:
			// An iteration ended on its own (a lost critical event or a failure):
			// start it again from the authoritative state.
			c.log.Warn("iteration ended; restarting", "error", err)
			if err != nil {
				c.reportIterationError(ctx, err)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(2 * time.Second): // don't spin on a lasting failure
			}
			cfg := current.cfg
			current, done = c.start(ctx, cfg, current.generation)
		case u := <-configs:
			cfg, err := decodeConfig(u)
			if err == nil {
				var it *iteration
				it, err = c.prepare(cfg, u.GetGeneration())
				if err == nil {
					if current != nil {
						current.stop()
						<-done
					}
					current, done = c.launch(ctx, it)
					c.setConfigStatus(ctx, u, nil)
					continue
				}
			}
			c.log.Error("config rejected; the previous config keeps running", "error", err)
			c.setConfigStatus(ctx, u, err)
		}
	}
}

func (c *Controller) start(ctx context.Context, cfg *v1alpha1.HAProxyTemplateConfig, gen int64) (*iteration, chan error) {
	it, err := c.prepare(cfg, gen)
	if err != nil { // compiled before, so this is not expected; retry later
		done := make(chan error, 1)
		go func() { time.Sleep(time.Second); done <- err }()
		return &iteration{cfg: cfg, generation: gen, stop: func() {}}, done
	}
	return c.launch(ctx, it)
}

func (c *Controller) launch(ctx context.Context, it *iteration) (*iteration, chan error) {
	ictx, cancel := context.WithCancel(ctx)
	it.stop = func() {
		c.current.CompareAndSwap(it, nil)
		cancel()
	}
	done := make(chan error, 1)
	c.current.Store(it)
	go func() { done <- it.run(ictx) }()
	return it, done
}

// decodeConfig decodes, defaults and validates a config object from the API server.
func decodeConfig(u *unstructured.Unstructured) (*v1alpha1.HAProxyTemplateConfig, error) {
	obj := u.DeepCopy().Object
	delete(obj, "status")
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse(u.GetNamespace()+"/"+u.GetName(), data)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, fmt.Errorf("decode config: %w", err)
	}
	return cfg, nil
}

// startPublisher publishes what a fleet's rendering is, and what its pods run, as
// an HAProxyCfg: the config's name for the podSelector's fleet, <config>-gw-<id>
// for a Gateway's. At most once per configPublishInterval, off the delivery path
// (its inputs never block). It stops with ctx.
func (c *Controller) startPublisher(ctx context.Context, cfg *v1alpha1.HAProxyTemplateConfig, f *fleet) *publish.Publisher {
	threshold := 0
	if t := cfg.Spec.Controller.ConfigPublishing.CompressionThreshold; t != nil {
		threshold = int(*t)
	}
	opts := publish.Options{
		Client: c.dyn, Namespace: c.opts.Namespace, Config: c.opts.ConfigName, Log: c.log,
		Interval: cfg.Spec.Dataplane.ParsedDurations().ConfigPublish, Threshold: threshold,
		Pods: func() []string {
			var names []string
			for _, p := range f.dep.Pods() {
				names = append(names, p.Name)
			}
			return names
		},
	}
	if !f.isDefault() {
		id := gatewayID(f.gateway)
		opts.Name = c.opts.ConfigName + "-gw-" + id
		opts.Labels = map[string]string{gatewayLabel: id}
		opts.Annotations = map[string]string{gatewayAnnotation: f.gateway.String()}
	}
	p := publish.New(opts)
	go p.Run(ctx)
	return p
}

// watchConfig delivers the HAProxyTemplateConfig whenever its generation changes
// (latest wins) until ctx ends.
func (c *Controller) watchConfig(ctx context.Context) (<-chan *unstructured.Unstructured, error) {
	configs := make(chan *unstructured.Unstructured, 1)
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.dyn, 0, c.opts.Namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", c.opts.ConfigName).String()
	})
	inf := f.ForResource(ConfigGVR).Informer()
	offer := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		select { // latest wins
		case <-configs:
		default:
		}
		configs <- u
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: offer,
		UpdateFunc: func(old, obj any) {
			if o, n := old.(*unstructured.Unstructured), obj.(*unstructured.Unstructured); o.GetGeneration() != n.GetGeneration() {
				offer(obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	go inf.Run(ctx.Done())
	return configs, nil
}

// leadershipEnded is what run returns when its context ends: nil on shutdown, an
// error when leadership was lost while the controller was meant to run (the
// process exits and restarts as a follower).
func (c *Controller) leadershipEnded(parent context.Context) error {
	if c.opts.LeaderElection != nil && parent.Err() == nil {
		return errors.New("leader election lost")
	}
	return nil
}
