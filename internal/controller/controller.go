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
	"k8s.io/apimachinery/pkg/types"
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
	opts    Options
	d       deps                      // what iterations are given
	current atomic.Pointer[iteration] // the running iteration, for admission (admission.go)
	standby atomic.Pointer[iteration] // stores for admission before this replica leads (standby.go)
	// standbyDone stops the standby once the leader's stores are ready.
	standbyDone standbyStopper
	peer        leaderPeer   // where admission reviews are relayed (relay.go)
	metricsLn   net.Listener // nil: no metrics endpoint
	// events sends the recorder's Events to the API server until run returns.
	events record.EventBroadcaster
}

// Run runs the controller until ctx ends.
func Run(ctx context.Context, opts Options) error {
	c, err := newController(opts)
	if err != nil {
		return err
	}
	return c.run(ctx)
}

// The API clients' rate limit, unless the rest config sets a higher one. client-go's
// default (5 requests/s, bursts of 10) made a change wait for the limiter once status,
// HAProxyCfg and pod discovery calls had used the burst. Status writes have a client
// (and limiter) of their own, so that they do not queue behind the controller's reads.
const (
	apiQPS   = 50
	apiBurst = 100
)

func newController(opts Options) (*Controller, error) {
	cfg := rest.CopyConfig(opts.Rest)
	if cfg.QPS < apiQPS {
		cfg.QPS, cfg.Burst = apiQPS, apiBurst
	}
	// The API server gzips large answers and watch streams for a client that takes
	// them: for a controller beside it, that is CPU on both ends for every event, and
	// every watch kept a decompressor (2.5 MB of the heap at 5,000 routes of the mix).
	cfg.DisableCompression = true
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	statusCfg := rest.CopyConfig(cfg)
	statusDyn, err := dynamic.NewForConfig(statusCfg)
	if err != nil {
		return nil, fmt.Errorf("status client: %w", err)
	}
	return newWithClients(opts, clients{kube: kube, dyn: dyn, meta: meta, statusDyn: statusDyn})
}

// clients are the API clients the controller runs with (fakes in tests).
type clients struct {
	kube      kubernetes.Interface
	dyn       dynamic.Interface
	meta      metadata.Interface
	statusDyn dynamic.Interface // status writes
}

func newWithClients(opts Options, cl clients) (*Controller, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	m := metrics.New()
	broadcaster := record.NewBroadcaster()
	// Events go to the namespace of the object they are about (a left-out route is in
	// its team's namespace), so the sink is not bound to one namespace.
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cl.kube.CoreV1().Events(metav1.NamespaceAll)})
	recorder := broadcaster.NewRecorder(scheme(), corev1.EventSource{Component: "haptic"})
	c := &Controller{opts: opts, events: broadcaster}
	deliveries := newDeliveries(m)
	c.d = deps{
		kube: cl.kube, dyn: cl.dyn, meta: cl.meta, namespace: opts.Namespace, configName: opts.ConfigName,
		haproxy: opts.HAProxyBinary, schemaDir: opts.SchemaDir, agentHTTP: opts.AgentHTTP,
		log: opts.Log, metrics: m, bus: events.NewBus(m), recorder: recorder,
		config: &configStatus{dyn: cl.dyn, recorder: recorder, log: opts.Log, namespace: opts.Namespace, name: opts.ConfigName,
			hold: deliveries.wait},
		storesInUse: c.standbyDone.done,
		deliveries:  deliveries,
	}
	c.d.status = writer.New(writer.Options{
		Dynamic: cl.statusDyn, Discovery: cl.kube.Discovery(), Log: opts.Log, SharedInformers: true,
		OnWrite: func(kind string) { m.StatusWrites.WithLabelValues(kind).Inc() },
		// The runtime path first: a pass waits while a change is being delivered.
		BeforePass: c.d.deliveries.beforeStatusPass, AfterPass: c.d.deliveries.afterStatusPass,
		// With per-Gateway pods, a new or deleted Gateway changes the fleets.
		OnGateways: func(map[types.NamespacedName]int64) { c.gatewaysChanged() },
	})
	return c, nil
}

// gatewaysChanged asks the running iteration, if any, to reconcile and sync its
// Gateway fleets.
func (c *Controller) gatewaysChanged() {
	if it := c.current.Load(); it != nil {
		it.gatewaysChanged()
	}
}

// runConfig runs one iteration per accepted config until ctx ends: a new config
// generation replaces the running iteration once it compiled (an invalid one leaves
// it running); an iteration that ends on its own is started again.
func (c *Controller) runConfig(ctx context.Context) error {
	configs, err := c.watchConfig(ctx)
	if err != nil {
		return err
	}
	c.d.log.Info("waiting for config", "namespace", c.opts.Namespace, "name", c.opts.ConfigName)

	var current *iteration
	var done chan error
	for {
		select {
		case <-ctx.Done():
			if current != nil {
				current.stop()
				<-done
			}
			return nil
		case err := <-done:
			// An iteration ended on its own (a lost critical event or a failure, or
			// resources it skipped are served now): start it again from the
			// authoritative state.
			if errors.Is(err, errResourcesServed) {
				c.d.log.Info("watched resources appeared; restarting the watch", "error", err)
				cfg := current.cfg
				current, done = c.start(ctx, cfg, current.generation)
				continue
			}
			c.d.log.Warn("iteration ended; restarting", "error", err)
			if err != nil {
				c.d.config.iterationFailed(ctx, err)
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
				it, err = prepare(c.d, cfg, u.GetGeneration())
				if err == nil {
					if current != nil {
						current.stop()
						<-done
					}
					current, done = c.launch(ctx, it)
					c.d.config.setValid(ctx, u, nil)
					continue
				}
			}
			c.d.log.Error("config rejected; the previous config keeps running", "error", err)
			c.d.config.setValid(ctx, u, err)
		}
	}
}

func (c *Controller) start(ctx context.Context, cfg *v1alpha1.HAProxyTemplateConfig, gen int64) (*iteration, chan error) {
	it, err := prepare(c.d, cfg, gen)
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

// watchConfig delivers the HAProxyTemplateConfig whenever its generation changes
// (latest wins) until ctx ends.
func (c *Controller) watchConfig(ctx context.Context) (<-chan *unstructured.Unstructured, error) {
	configs := make(chan *unstructured.Unstructured, 1)
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.d.dyn, 0, c.opts.Namespace, func(o *metav1.ListOptions) {
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
