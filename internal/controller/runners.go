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
	if c.opts.MetricsAddr != "" {
		ln, err := net.Listen("tcp", c.opts.MetricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		c.metricsLn = ln
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rs := c.runners()
	errs := make(chan error, len(rs))
	var wg sync.WaitGroup
	release := func() {}
	defer func() { release() }() // after every runner stopped: give the Lease up
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: every runner stops, then run returns
	start := func(ctx context.Context, leaderOnly bool) {
		for _, r := range rs {
			if r.leaderOnly != leaderOnly {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := r.run(ctx); err != nil && ctx.Err() == nil {
					errs <- fmt.Errorf("%s: %w", r.name, err)
				}
			}()
		}
	}
	// Every replica serves metrics (and admission); only the leader goes on.
	start(ctx, false)
	c.labelLeader(ctx, false)
	lctx, rel, err := c.lead(ctx)
	if err != nil {
		return err
	}
	release = rel
	if lctx.Err() != nil {
		return c.leadershipEnded(parent)
	}
	c.labelLeader(lctx, true)
	start(lctx, true)
	select {
	case <-lctx.Done():
		return c.leadershipEnded(parent)
	case err := <-errs:
		return err
	}
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
