package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// A runner is one long-running part of `haptic run`, in the style of
// controller-runtime's Runnable: every replica runs the runners that are not
// leaderOnly from the start; the leader runs the others once it leads, with a
// context that ends when leadership is lost. A runner returns when its context
// ends; an error it returns ends the controller.
type runner struct {
	name       string
	leaderOnly bool
	run        func(ctx context.Context) error
}

// runners is the controller: the list of what runs, in start order.
func (c *Controller) runners() []runner {
	var rs []runner
	if c.metricsLn != nil {
		rs = append(rs, runner{name: "metrics", run: c.serveMetrics})
	}
	if c.opts.WebhookListener != nil {
		rs = append(rs,
			runner{name: "admission webhook", run: c.serveWebhook},
			// Stores for admission until this replica's own iteration has them.
			runner{name: "admission standby", run: c.runStandby})
	}
	return append(rs,
		// Gateway API and Ingress status, from the iteration's informers.
		runner{name: "route status", leaderOnly: true, run: c.runStatus},
		// The config's iterations: watch → render → validate → deploy.
		runner{name: "config", leaderOnly: true, run: c.runConfig})
}

func (c *Controller) run(ctx context.Context) error {
	defer c.events.Shutdown() // last: the runners' final events are queued first
	if c.opts.MetricsAddr != "" {
		ln, err := net.Listen("tcp", c.opts.MetricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		c.metricsLn = ln
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rs := c.runners()
	errs := make(chan error, len(rs))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: every runner stops, then run returns
	start := func(ctx context.Context, leaderOnly bool, wg *sync.WaitGroup) {
		for _, r := range rs {
			if r.leaderOnly != leaderOnly {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := r.run(ctx); err != nil && ctx.Err() == nil {
					select {
					case errs <- fmt.Errorf("%s: %w", r.name, err):
					default: // one error ends the controller; the first is enough
					}
				}
			}()
		}
	}
	// Every replica serves metrics (and admission); only the leader goes on.
	start(ctx, false, &wg)
	for {
		err := c.leadOnce(ctx, func(lctx context.Context, lwg *sync.WaitGroup) { start(lctx, true, lwg) }, errs)
		if err != nil || ctx.Err() != nil {
			return err
		}
		// Leadership lost while meant to run — the API server away, a renewal too
		// late: campaign again in this process (its metrics and admission stay up,
		// and no container back-off delays the return once the API server is back).
		c.d.log.Warn("leadership lost; campaigning again")
	}
}

// leadOnce campaigns, runs the leader-only runners (through start) while this
// replica leads, and returns when leadership ends — nil, after the runners
// stopped and the Lease was given up — or with the first runner error.
func (c *Controller) leadOnce(ctx context.Context, start func(context.Context, *sync.WaitGroup), errs <-chan error) error {
	c.labelLeader(ctx, false)
	lctx, release, err := c.lead(ctx)
	if err != nil {
		return err
	}
	defer release() // after the leader-only runners stopped: give the Lease up
	if lctx.Err() != nil {
		return nil
	}
	var lwg sync.WaitGroup
	defer lwg.Wait()
	lctx, stop := context.WithCancel(lctx)
	defer stop() // runs first: a runner's error stops the others too
	c.labelLeader(lctx, true)
	start(lctx, &lwg)
	select {
	case <-lctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}

// serveMetrics serves /metrics and /healthz on the metrics listener.
func (c *Controller) serveMetrics(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", c.d.metrics.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	c.d.log.Info("metrics listening", "addr", c.metricsLn.Addr().String())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(c.metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
		c.d.log.Error("metrics server stopped", "error", err)
	}
	return nil
}

// runStatus runs the writer of Gateway API and Ingress status for the controller's
// lifetime as leader; iterations feed it the data plane's addresses, the
// IngressClass and which Gateways are live.
func (c *Controller) runStatus(ctx context.Context) error {
	if err := c.d.status.Run(ctx); err != nil {
		c.d.log.Error("status writer stopped", "error", err)
	}
	return nil
}
