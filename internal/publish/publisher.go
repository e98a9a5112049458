package publish

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/deploy"
)

// Options configure a Publisher.
type Options struct {
	Client dynamic.Interface
	// Namespace and Config are the HAProxyTemplateConfig's: the HAProxyCfg lives
	// in the same namespace, names the config as its source and has it as owner.
	Namespace, Config string
	// Name is the HAProxyCfg's name (empty: Config's). A config renders once per
	// fleet of pods, and each fleet's rendering is published on its own.
	Name string
	// Labels and Annotations are set on the HAProxyCfg when it is created.
	Labels, Annotations map[string]string
	// Interval is the shortest time between two publications (<= 0: the default
	// configPublishInterval, 10s).
	Interval time.Duration
	// Threshold is the content size above which content is compressed (<= 0:
	// v1alpha1.DefaultCompressionThreshold).
	Threshold int
	// Pods lists the pods being served; status keeps only those. Nil keeps every pod.
	Pods func() []string
	// Hold, if set, is called before each write and may block: the controller holds
	// HAProxyCfg writes while a change is being delivered to the pods.
	Hold func(context.Context)
	Log  *slog.Logger
}

// Publisher keeps the HAProxyCfg at the latest desired bundle and pod outcomes.
type Publisher struct {
	opts   Options
	signal chan struct{}
	now    func() time.Time

	mu      sync.Mutex
	desired *bundle.Bundle
	pods    map[string]v1alpha1.HAProxyCfgPodStatus

	// lastErr is the last write error logged at warning level (Run's goroutine only).
	lastErr string
}

// New returns a publisher; Run does the writing.
func New(opts Options) *Publisher {
	if opts.Interval <= 0 {
		opts.Interval = v1alpha1.DefaultConfigPublishInterval
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Name == "" {
		opts.Name = opts.Config
	}
	return &Publisher{opts: opts, signal: make(chan struct{}, 1), now: time.Now,
		pods: map[string]v1alpha1.HAProxyCfgPodStatus{}}
}

// SetDesired records the bundle pods should run; the latest call wins. It never
// blocks. A nil Publisher ignores it.
func (p *Publisher) SetDesired(b *bundle.Bundle) {
	if p == nil || b == nil {
		return
	}
	p.mu.Lock()
	p.desired = b
	p.mu.Unlock()
	p.wake()
}

// OnOutcome records an apply to a pod. It never blocks (deploy.Options.OnOutcome).
// A nil Publisher ignores it.
func (p *Publisher) OnOutcome(o deploy.Outcome) {
	if p == nil || o.Pod == "" {
		return
	}
	now := p.now()
	p.mu.Lock()
	p.pods[o.Pod] = ApplyOutcome(p.pods[o.Pod], o, now)
	p.mu.Unlock()
	p.wake()
}

func (p *Publisher) wake() {
	select {
	case p.signal <- struct{}{}:
	default:
	}
}

// Run publishes until ctx ends: after each change, at most once per interval.
func (p *Publisher) Run(ctx context.Context) {
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.signal:
		}
		if wait := time.Until(last.Add(p.opts.Interval)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if p.opts.Hold != nil {
			p.opts.Hold(ctx)
		}
		// Changes that arrived while waiting are in the state read below.
		select {
		case <-p.signal:
		default:
		}
		last = time.Now()
		err := p.flush(ctx)
		if ctx.Err() != nil {
			return
		}
		p.report(err)
		if err != nil {
			p.wake() // retry after the interval
		}
	}
}

// report logs a failure once at warning level until it changes or clears.
func (p *Publisher) report(err error) {
	switch {
	case err == nil:
		if p.lastErr != "" {
			p.opts.Log.Info("publishing HAProxyCfg works again")
		}
		p.lastErr = ""
	case err.Error() != p.lastErr:
		p.lastErr = err.Error()
		p.opts.Log.Warn("publish HAProxyCfg failed; retrying", "error", err)
	default:
		p.opts.Log.Debug("publish HAProxyCfg failed; retrying", "error", err)
	}
}

// flush writes what changed since the object was last read.
func (p *Publisher) flush(ctx context.Context) error {
	var current []string
	if p.opts.Pods != nil {
		current = p.opts.Pods()
		if current == nil {
			current = []string{}
		}
	}
	p.mu.Lock()
	b := p.desired
	if current != nil {
		keep := make(map[string]bool, len(current))
		for _, n := range current {
			keep[n] = true
		}
		maps.DeleteFunc(p.pods, func(name string, _ v1alpha1.HAProxyCfgPodStatus) bool { return !keep[name] })
	}
	local := maps.Clone(p.pods)
	p.mu.Unlock()
	if b == nil {
		return nil // the status lives on the object, which needs a bundle first
	}
	obj, err := p.writeSpec(ctx, b)
	if err != nil {
		return err
	}
	return p.writeStatus(ctx, obj, local, current)
}
